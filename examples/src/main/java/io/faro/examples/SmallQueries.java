package io.faro.examples;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * A warehouse's small queries: about sixty multi-stage Spark SQL queries over generated tables
 * (aggregations, joins, windows, set operations, sorts, subqueries, grouping sets, and queries over
 * empty inputs), most shuffling kilobytes to a few megabytes. For {@code bench/small-queries.sh},
 * which runs this in a fresh JVM per shuffle mode and round and compares the two shuffles query by
 * query: what Faro's fixed cost per shuffle and per task adds where the data is small.
 *
 * <p>Broadcast joins are off ({@code spark.sql.autoBroadcastJoinThreshold -1}), as for the large
 * dimension tables of a warehouse, so that every join shuffles both sides; AQE is on, as in Spark's
 * defaults, and coalesces the 200 shuffle partitions.
 *
 * <p>Arguments: {@code --mode builtin|faro}, {@code --master-endpoints host:port[,...]} (mode
 * faro), {@code --scale X} (rows of the fact table: 200,000 times X; default 1), {@code --local-dir
 * DIR}, {@code --conf key=value} (repeatable). Prints one JSON line per query ({@code query},
 * {@code name}, {@code millis}, {@code checksum}) and a last one with {@code shuffle_manager}. The
 * checksum is {@link CompareJobs#checksum}'s: independent of row order.
 */
public final class SmallQueries {
  private SmallQueries() {}

  /** The queries, by name; each reads the views {@link #tables} registers. */
  static Map<String, String> queries() {
    Map<String, String> q = new LinkedHashMap<>();
    // Aggregations.
    q.put("agg-customer", "SELECT customer, count(*), sum(qty) FROM orders GROUP BY customer");
    q.put("agg-item-avg", "SELECT item, avg(price) FROM orders GROUP BY item");
    q.put("agg-day-minmax", "SELECT day, max(price), min(price) FROM orders GROUP BY day");
    q.put(
        "agg-status-distinct",
        "SELECT status, count(DISTINCT customer) FROM orders GROUP BY status");
    q.put("agg-distinct-items", "SELECT count(DISTINCT item) FROM orders");
    q.put(
        "agg-bucket-revenue",
        "SELECT customer % 100 AS b, sum(price * qty) FROM orders GROUP BY customer % 100");
    q.put("agg-region", "SELECT region, count(*) FROM customers GROUP BY region");
    q.put("agg-category-cost", "SELECT category, sum(cost) FROM items GROUP BY category");
    q.put(
        "agg-weekday-status",
        "SELECT day % 7 AS dow, status, count(*) FROM orders GROUP BY day % 7, status");
    q.put(
        "agg-median-by-qty", "SELECT qty, percentile_approx(price, 0.5) FROM orders GROUP BY qty");
    q.put(
        "agg-having",
        "SELECT customer, count(*) AS n FROM orders GROUP BY customer"
            + " HAVING sum(qty) > 5 * count(*)");
    q.put(
        "agg-collect",
        "SELECT customer, size(collect_set(item)) FROM orders WHERE day < 30 GROUP BY customer");
    // Joins (every one a shuffle join).
    q.put(
        "join-region",
        "SELECT c.region, count(*) FROM orders o JOIN customers c ON o.customer = c.id"
            + " GROUP BY c.region");
    q.put(
        "join-category",
        "SELECT i.category, sum(o.qty) FROM orders o JOIN items i ON o.item = i.id"
            + " GROUP BY i.category");
    q.put(
        "join-three-way",
        "SELECT c.region, i.category, sum(o.price * o.qty) FROM orders o"
            + " JOIN customers c ON o.customer = c.id JOIN items i ON o.item = i.id"
            + " GROUP BY c.region, i.category");
    q.put(
        "join-left-segment",
        "SELECT c.segment, count(o.id) FROM customers c LEFT JOIN orders o"
            + " ON o.customer = c.id AND o.day = 17 GROUP BY c.segment");
    q.put(
        "join-semi",
        "SELECT c.id FROM customers c LEFT SEMI JOIN orders o ON o.customer = c.id AND o.qty = 10");
    q.put(
        "join-anti",
        "SELECT i.id FROM items i LEFT ANTI JOIN orders o ON o.item = i.id AND o.day = 0");
    q.put(
        "join-tiny",
        "SELECT t.id, count(*) FROM orders o JOIN tiny t ON o.qty = t.id GROUP BY t.id");
    q.put(
        "join-self",
        "SELECT a.customer, count(*) FROM orders a JOIN orders b ON a.id = b.id + 1"
            + " WHERE a.day = 3 GROUP BY a.customer");
    q.put(
        "join-filtered",
        "SELECT c.name, o.price FROM orders o JOIN customers c ON o.customer = c.id"
            + " WHERE c.region = 7 AND o.status = 'open'");
    q.put(
        "join-full-outer",
        "SELECT coalesce(c.id, a.customer), a.n FROM customers c FULL OUTER JOIN"
            + " (SELECT customer, count(*) AS n FROM orders WHERE day = 5 GROUP BY customer) a"
            + " ON a.customer = c.id");
    q.put(
        "empty-join-fact",
        "SELECT o.customer, count(*) FROM orders o JOIN empty_orders e ON o.id = e.id"
            + " GROUP BY o.customer");
    q.put(
        "join-agg-agg",
        "SELECT a.customer, a.n, b.m FROM (SELECT customer, count(*) AS n FROM orders"
            + " GROUP BY customer) a JOIN (SELECT customer, max(price) AS m FROM orders"
            + " GROUP BY customer) b ON a.customer = b.customer");
    // Windows.
    q.put(
        "win-top-per-customer",
        "SELECT * FROM (SELECT customer, price, row_number() OVER (PARTITION BY customer"
            + " ORDER BY price DESC, id) AS r FROM orders) WHERE r = 1");
    q.put(
        "win-rank-item",
        "SELECT item, day, rank() OVER (PARTITION BY item ORDER BY day) FROM orders"
            + " WHERE item < 50");
    q.put(
        "win-running-sum",
        "SELECT customer, id, sum(qty) OVER (PARTITION BY customer ORDER BY id"
            + " ROWS UNBOUNDED PRECEDING) FROM orders WHERE customer < 100");
    q.put(
        "win-lag-lead",
        "SELECT id, lag(price) OVER (PARTITION BY customer ORDER BY id),"
            + " lead(price) OVER (PARTITION BY customer ORDER BY id) FROM orders"
            + " WHERE customer < 200");
    q.put(
        "win-dense-rank",
        "SELECT id, dense_rank() OVER (PARTITION BY category ORDER BY cost) FROM items");
    q.put("win-ntile", "SELECT id, ntile(4) OVER (ORDER BY price, id) FROM orders WHERE day = 100");
    q.put(
        "win-avg-day",
        "SELECT id, price - avg(price) OVER (PARTITION BY day) FROM orders WHERE qty = 3");
    q.put(
        "win-count-status",
        "SELECT DISTINCT status, count(*) OVER (PARTITION BY status) FROM orders");
    // Set operations.
    q.put(
        "set-union-all",
        "SELECT k, count(*) FROM (SELECT customer AS k FROM orders WHERE day = 1 UNION ALL"
            + " SELECT id AS k FROM customers WHERE region = 1) GROUP BY k");
    q.put(
        "set-union",
        "SELECT customer FROM orders WHERE day = 2 UNION SELECT customer FROM orders"
            + " WHERE day = 3");
    q.put(
        "set-intersect",
        "SELECT customer FROM orders WHERE day < 100 INTERSECT SELECT customer FROM orders"
            + " WHERE day >= 100");
    q.put(
        "set-except", "SELECT id FROM customers EXCEPT SELECT customer FROM orders WHERE day < 20");
    q.put("set-distinct", "SELECT DISTINCT customer, status FROM orders");
    q.put(
        "set-union-empty",
        "SELECT customer, count(*) FROM (SELECT customer FROM orders WHERE day = 9 UNION ALL"
            + " SELECT customer FROM empty_orders) GROUP BY customer");
    // Empty inputs.
    q.put("empty-agg", "SELECT customer, sum(qty) FROM empty_orders GROUP BY customer");
    q.put(
        "empty-join",
        "SELECT c.region, count(*) FROM empty_orders e JOIN customers c ON e.customer = c.id"
            + " GROUP BY c.region");
    q.put(
        "empty-window",
        "SELECT id, row_number() OVER (PARTITION BY customer ORDER BY id) FROM empty_orders");
    q.put(
        "empty-filtered-agg",
        "SELECT status, count(*) FROM orders WHERE price < 0 GROUP BY status");
    q.put("empty-distinct", "SELECT DISTINCT item FROM empty_orders");
    q.put(
        "empty-union",
        "SELECT customer, count(*) FROM (SELECT customer FROM empty_orders UNION ALL"
            + " SELECT customer FROM orders WHERE qty > 100) GROUP BY customer");
    // Sorts.
    q.put("sort-top10", "SELECT id, price FROM orders ORDER BY price DESC, id LIMIT 10");
    q.put(
        "sort-top100", "SELECT customer, day, id FROM orders ORDER BY customer, day, id LIMIT 100");
    q.put("sort-items", "SELECT * FROM items ORDER BY cost, id");
    q.put("sort-customers", "SELECT * FROM customers ORDER BY region DESC, id");
    // Subqueries and common table expressions.
    q.put(
        "sub-in",
        "SELECT count(*) FROM orders WHERE customer IN (SELECT id FROM customers"
            + " WHERE region = 3)");
    q.put(
        "sub-cte",
        "WITH a AS (SELECT customer, sum(qty) AS q FROM orders GROUP BY customer),"
            + " b AS (SELECT customer, count(DISTINCT item) AS d FROM orders GROUP BY customer)"
            + " SELECT a.customer, q, d FROM a JOIN b ON a.customer = b.customer");
    q.put(
        "sub-scalar", "SELECT count(*) FROM orders WHERE price > (SELECT avg(price) FROM orders)");
    q.put(
        "sub-nested-agg",
        "SELECT n, count(*) FROM (SELECT customer, count(*) AS n FROM orders GROUP BY customer)"
            + " GROUP BY n");
    q.put(
        "sub-exists",
        "SELECT count(*) FROM items i WHERE EXISTS (SELECT 1 FROM orders o WHERE o.item = i.id"
            + " AND o.qty = 7)");
    // Grouping sets.
    q.put(
        "group-rollup",
        "SELECT region, segment, count(*) FROM customers GROUP BY ROLLUP(region, segment)");
    q.put("group-cube", "SELECT status, qty, count(*) FROM orders GROUP BY CUBE(status, qty)");
    q.put(
        "group-sets",
        "SELECT category, brand, sum(cost) FROM items GROUP BY category, brand"
            + " GROUPING SETS ((category), (brand), ())");
    // Explicit repartitions.
    q.put(
        "repartition-group",
        "SELECT /*+ REPARTITION(10) */ customer, qty FROM orders WHERE day = 50");
    q.put(
        "repartition-by-key",
        "SELECT /*+ REPARTITION(20, item) */ item, price FROM orders WHERE day = 60");
    return q;
  }

  /** The generated tables, as views: deterministic, so that every run reads the same rows. */
  static void tables(SparkSession spark, double scale) {
    long orders = Math.max(1_000, Math.round(200_000 * scale));
    spark
        .range(orders)
        .selectExpr(
            "id",
            "id % 5000 AS customer",
            "(id * 7) % 2000 AS item",
            "id % 10 + 1 AS qty",
            "(id % 1000) / 10.0 AS price",
            "id % 365 AS day",
            "CASE id % 3 WHEN 0 THEN 'open' WHEN 1 THEN 'shipped' ELSE 'returned' END AS status")
        .createOrReplaceTempView("orders");
    spark.sql("SELECT * FROM orders WHERE false").createOrReplaceTempView("empty_orders");
    spark
        .range(5000)
        .selectExpr("id", "id % 20 AS region", "id % 5 AS segment", "concat('c', id) AS name")
        .createOrReplaceTempView("customers");
    spark
        .range(2000)
        .selectExpr("id", "id % 50 AS category", "id % 100 AS brand", "(id % 500) / 10.0 AS cost")
        .createOrReplaceTempView("items");
    spark.range(1, 11).selectExpr("id").createOrReplaceTempView("tiny");
  }

  public static void main(String[] args) {
    int code;
    try {
      code = run(args);
    } catch (IllegalArgumentException e) {
      System.err.println(
          "SmallQueries: "
              + e.getMessage()
              + "\nusage: SmallQueries --mode builtin|faro [--master-endpoints host:port]"
              + " [--scale X] [--local-dir DIR] [--conf k=v]...");
      code = 2;
    } catch (Exception e) {
      System.err.println("SmallQueries failed:");
      e.printStackTrace();
      code = 1;
    }
    System.exit(code);
  }

  private static int run(String[] args) {
    // The comparison jobs' command line, with a job name it ignores.
    List<String> withJob = new ArrayList<>(List.of("--job", "sql"));
    withJob.addAll(List.of(args));
    CompareJobs.Options options = CompareJobs.Options.parse(withJob.toArray(String[]::new));
    SparkConf conf =
        new SparkConf()
            .setMaster("local[2]")
            .setAppName("faro-small-queries-" + options.mode())
            .set("spark.ui.enabled", "false")
            .set("spark.driver.host", "127.0.0.1")
            .set("spark.driver.bindAddress", "127.0.0.1")
            .set("spark.sql.adaptive.enabled", "true")
            .set("spark.sql.autoBroadcastJoinThreshold", "-1");
    if (options.localDir() != null) {
      conf.set("spark.local.dir", options.localDir());
    }
    if (options.mode().equals("faro")) {
      conf.set("spark.shuffle.manager", CompareJobs.FARO_SHUFFLE_MANAGER)
          .set("spark.faro.master.endpoints", options.masterEndpoints())
          .set("spark.shuffle.service.enabled", "false");
    }
    options.extraConf().forEach(conf::set);
    SparkSession spark = SparkSession.builder().config(conf).getOrCreate();
    try {
      tables(spark, options.scale());
      int i = 0;
      for (Map.Entry<String, String> query : queries().entrySet()) {
        long start = System.nanoTime();
        Row sums = CompareJobs.checksumOf(spark.sql(query.getValue())).collectAsList().get(0);
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        System.out.println(
            String.format(
                Locale.ROOT,
                "{\"query\":%d,\"name\":\"%s\",\"millis\":%d,\"checksum\":\"%s\"}",
                i++,
                query.getKey(),
                millis,
                CompareJobs.checksum(sums)));
      }
      String manager = SparkEnv.get().shuffleManager().getClass().getName();
      System.out.println(
          "{\"mode\":\""
              + options.mode()
              + "\",\"shuffle_manager\":\""
              + manager
              + "\",\"spark_version\":\""
              + spark.version()
              + "\"}");
      boolean faroRan = manager.equals(CompareJobs.FARO_SHUFFLE_MANAGER);
      return options.mode().equals("faro") == faroRan ? 0 : 3;
    } finally {
      spark.stop();
    }
  }
}
