-- The small queries of SmallQueries, one per block: a "-- name:" line, then the query.
-- Each reads the views SmallQueries.tables registers; a name that starts with "empty-"
-- reads an empty input and must return no row.

-- Aggregations.

-- name: agg-customer
SELECT customer, count(*), sum(qty) FROM orders GROUP BY customer

-- name: agg-item-avg
SELECT item, avg(price) FROM orders GROUP BY item

-- name: agg-day-minmax
SELECT day, max(price), min(price) FROM orders GROUP BY day

-- name: agg-status-distinct
SELECT status, count(DISTINCT customer) FROM orders GROUP BY status

-- name: agg-distinct-items
SELECT count(DISTINCT item) FROM orders

-- name: agg-bucket-revenue
SELECT customer % 100 AS b, sum(price * qty) FROM orders GROUP BY customer % 100

-- name: agg-region
SELECT region, count(*) FROM customers GROUP BY region

-- name: agg-category-cost
SELECT category, sum(cost) FROM items GROUP BY category

-- name: agg-weekday-status
SELECT day % 7 AS dow, status, count(*) FROM orders GROUP BY day % 7, status

-- name: agg-median-by-qty
SELECT qty, percentile_approx(price, 0.5) FROM orders GROUP BY qty

-- name: agg-having
SELECT customer, count(*) AS n FROM orders GROUP BY customer HAVING sum(qty) > 5 * count(*)

-- name: agg-collect
SELECT customer, size(collect_set(item)) FROM orders WHERE day < 30 GROUP BY customer

-- Joins (every one a shuffle join).

-- name: join-region
SELECT c.region, count(*) FROM orders o JOIN customers c ON o.customer = c.id GROUP BY c.region

-- name: join-category
SELECT i.category, sum(o.qty) FROM orders o JOIN items i ON o.item = i.id GROUP BY i.category

-- name: join-three-way
SELECT c.region, i.category, sum(o.price * o.qty) FROM orders o JOIN customers c ON o.customer = c.id JOIN items i ON o.item = i.id GROUP BY c.region, i.category

-- name: join-left-segment
SELECT c.segment, count(o.id) FROM customers c LEFT JOIN orders o ON o.customer = c.id AND o.day = 17 GROUP BY c.segment

-- name: join-semi
SELECT c.id FROM customers c LEFT SEMI JOIN orders o ON o.customer = c.id AND o.qty = 10

-- name: join-anti
SELECT i.id FROM items i LEFT ANTI JOIN orders o ON o.item = i.id AND o.day = 0

-- name: join-tiny
SELECT t.id, count(*) FROM orders o JOIN tiny t ON o.qty = t.id GROUP BY t.id

-- name: join-self
SELECT a.customer, count(*) FROM orders a JOIN orders b ON a.id = b.id + 1 WHERE a.day = 3 GROUP BY a.customer

-- name: join-filtered
SELECT c.name, o.price FROM orders o JOIN customers c ON o.customer = c.id WHERE c.region = 7 AND o.status = 'open'

-- name: join-full-outer
SELECT coalesce(c.id, a.customer), a.n FROM customers c FULL OUTER JOIN (SELECT customer, count(*) AS n FROM orders WHERE day = 5 GROUP BY customer) a ON a.customer = c.id

-- name: empty-join-fact
SELECT o.customer, count(*) FROM orders o JOIN empty_orders e ON o.id = e.id GROUP BY o.customer

-- name: join-agg-agg
SELECT a.customer, a.n, b.m FROM (SELECT customer, count(*) AS n FROM orders GROUP BY customer) a JOIN (SELECT customer, max(price) AS m FROM orders GROUP BY customer) b ON a.customer = b.customer

-- Windows.

-- name: win-top-per-customer
SELECT * FROM (SELECT customer, price, row_number() OVER (PARTITION BY customer ORDER BY price DESC, id) AS r FROM orders) WHERE r = 1

-- name: win-rank-item
SELECT item, day, rank() OVER (PARTITION BY item ORDER BY day) FROM orders WHERE item < 50

-- name: win-running-sum
SELECT customer, id, sum(qty) OVER (PARTITION BY customer ORDER BY id ROWS UNBOUNDED PRECEDING) FROM orders WHERE customer < 100

-- name: win-lag-lead
SELECT id, lag(price) OVER (PARTITION BY customer ORDER BY id), lead(price) OVER (PARTITION BY customer ORDER BY id) FROM orders WHERE customer < 200

-- name: win-dense-rank
SELECT id, dense_rank() OVER (PARTITION BY category ORDER BY cost) FROM items

-- name: win-ntile
SELECT id, ntile(4) OVER (ORDER BY price, id) FROM orders WHERE day = 100

-- name: win-avg-day
SELECT id, price - avg(price) OVER (PARTITION BY day) FROM orders WHERE qty = 3

-- name: win-count-status
SELECT DISTINCT status, count(*) OVER (PARTITION BY status) FROM orders

-- Set operations.

-- name: set-union-all
SELECT k, count(*) FROM (SELECT customer AS k FROM orders WHERE day = 1 UNION ALL SELECT id AS k FROM customers WHERE region = 1) GROUP BY k

-- name: set-union
SELECT customer FROM orders WHERE day = 2 UNION SELECT customer FROM orders WHERE day = 3

-- name: set-intersect
SELECT customer FROM orders WHERE day < 100 INTERSECT SELECT customer FROM orders WHERE day >= 100

-- name: set-except
SELECT id FROM customers EXCEPT SELECT customer FROM orders WHERE day < 20

-- name: set-distinct
SELECT DISTINCT customer, status FROM orders

-- name: set-union-empty
SELECT customer, count(*) FROM (SELECT customer FROM orders WHERE day = 9 UNION ALL SELECT customer FROM empty_orders) GROUP BY customer

-- Empty inputs.

-- name: empty-agg
SELECT customer, sum(qty) FROM empty_orders GROUP BY customer

-- name: empty-join
SELECT c.region, count(*) FROM empty_orders e JOIN customers c ON e.customer = c.id GROUP BY c.region

-- name: empty-window
SELECT id, row_number() OVER (PARTITION BY customer ORDER BY id) FROM empty_orders

-- name: empty-filtered-agg
SELECT status, count(*) FROM orders WHERE price < 0 GROUP BY status

-- name: empty-distinct
SELECT DISTINCT item FROM empty_orders

-- name: empty-union
SELECT customer, count(*) FROM (SELECT customer FROM empty_orders UNION ALL SELECT customer FROM orders WHERE qty > 100) GROUP BY customer

-- Sorts.

-- name: sort-top10
SELECT id, price FROM orders ORDER BY price DESC, id LIMIT 10

-- name: sort-top100
SELECT customer, day, id FROM orders ORDER BY customer, day, id LIMIT 100

-- name: sort-items
SELECT * FROM items ORDER BY cost, id

-- name: sort-customers
SELECT * FROM customers ORDER BY region DESC, id

-- Subqueries and common table expressions.

-- name: sub-in
SELECT count(*) FROM orders WHERE customer IN (SELECT id FROM customers WHERE region = 3)

-- name: sub-cte
WITH a AS (SELECT customer, sum(qty) AS q FROM orders GROUP BY customer), b AS (SELECT customer, count(DISTINCT item) AS d FROM orders GROUP BY customer) SELECT a.customer, q, d FROM a JOIN b ON a.customer = b.customer

-- name: sub-scalar
SELECT count(*) FROM orders WHERE price > (SELECT avg(price) FROM orders)

-- name: sub-nested-agg
SELECT n, count(*) FROM (SELECT customer, count(*) AS n FROM orders GROUP BY customer) GROUP BY n

-- name: sub-exists
SELECT count(*) FROM items i WHERE EXISTS (SELECT 1 FROM orders o WHERE o.item = i.id AND o.qty = 7)

-- Grouping sets.

-- name: group-rollup
SELECT region, segment, count(*) FROM customers GROUP BY ROLLUP(region, segment)

-- name: group-cube
SELECT status, qty, count(*) FROM orders GROUP BY CUBE(status, qty)

-- name: group-sets
SELECT category, brand, sum(cost) FROM items GROUP BY category, brand GROUPING SETS ((category), (brand), ())

-- Explicit repartitions.

-- name: repartition-group
SELECT /*+ REPARTITION(10) */ customer, qty FROM orders WHERE day = 50

-- name: repartition-by-key
SELECT /*+ REPARTITION(20, item) */ item, price FROM orders WHERE day = 60
