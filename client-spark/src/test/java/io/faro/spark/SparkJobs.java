package io.faro.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import scala.Tuple2;

/**
 * The jobs compared between Spark's built-in shuffle and Faro. Each returns its result as a list of
 * strings in a canonical order (sorted, except where the job's own order is the result).
 */
final class SparkJobs {
  private SparkJobs() {}

  static List<Integer> numbers(int n, long seed) {
    Random random = new Random(seed);
    return IntStream.range(0, n)
        .map(i -> random.nextInt(50_000))
        .boxed()
        .collect(Collectors.toList());
  }

  static List<String> sorted(List<?> items) {
    return items.stream().map(String::valueOf).sorted().collect(Collectors.toList());
  }

  static List<String> repartition(SparkSession spark) {
    JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    JavaRDD<Integer> rdd = sc.parallelize(numbers(60_000, 1), 6).repartition(17);
    List<String> result = new ArrayList<>(sorted(rdd.collect()));
    result.add("partitions=" + rdd.getNumPartitions());
    return result;
  }

  /** Two shuffles in a row: 11 partitions, then 60. */
  static List<String> twoShuffles(SparkSession spark) {
    JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    JavaPairRDD<Integer, Long> counts =
        sc.parallelize(numbers(50_000, 4), 6)
            .mapToPair(n -> new Tuple2<>(n % 1009, 1L))
            .reduceByKey(Long::sum, 11);
    return sorted(
        counts
            .mapToPair(t -> new Tuple2<>(t._1() % 97, t._2()))
            .reduceByKey(Long::sum, 60)
            .collect());
  }

  static List<String> reduceByKey(SparkSession spark) {
    JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    JavaPairRDD<String, Integer> words =
        sc.parallelize(numbers(80_000, 2), 8).mapToPair(n -> new Tuple2<>("w" + (n % 997), 1));
    return sorted(words.reduceByKey(Integer::sum, 11).collect());
  }

  static List<String> groupByKey(SparkSession spark) {
    JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    JavaPairRDD<Integer, Integer> pairs =
        sc.parallelize(numbers(40_000, 3), 5).mapToPair(n -> new Tuple2<>(n % 313, n));
    return sorted(
        pairs
            .groupByKey(7)
            .mapValues(
                vs -> {
                  List<Integer> list = new ArrayList<>();
                  vs.forEach(list::add);
                  list.sort(null);
                  return list.toString();
                })
            .collect());
  }

  /** The order is the result here: it must be the same, element by element. */
  static List<String> sortByKey(SparkSession spark) {
    JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    JavaPairRDD<Integer, String> pairs =
        sc.parallelize(numbers(50_000, 4), 7).mapToPair(n -> new Tuple2<>(n, "v" + n));
    return pairs.sortByKey(true, 9).map(t -> t._1() + "=" + t._2()).collect();
  }

  static List<String> join(SparkSession spark) {
    JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    JavaPairRDD<Integer, String> left =
        sc.parallelize(numbers(20_000, 5), 4).mapToPair(n -> new Tuple2<>(n % 2000, "L" + n));
    JavaPairRDD<Integer, String> right =
        sc.parallelize(numbers(3_000, 6), 3).mapToPair(n -> new Tuple2<>(n % 2500, "R" + n));
    return sorted(left.join(right, 6).collect());
  }

  /**
   * A Spark SQL aggregation and a join of a skewed fact table with a dimension table. With the AQE
   * settings of the test, the plan coalesces small partitions and splits the skewed one.
   */
  static List<String> sqlAggregationAndSkewJoin(SparkSession spark) {
    Dataset<Row> facts =
        spark
            .range(0, 200_000, 1, 8)
            .selectExpr(
                "CASE WHEN id % 10 < 7 THEN 0 ELSE id % 500 END AS k",
                "id AS v", "CAST(id % 13 AS STRING) AS tag");
    Dataset<Row> dims =
        spark.range(0, 500, 1, 4).selectExpr("id AS k", "concat('name-', id) AS name");
    facts.createOrReplaceTempView("facts");
    dims.createOrReplaceTempView("dims");
    Dataset<Row> joined =
        spark.sql(
            "SELECT d.name, f.tag, count(*) AS n, sum(f.v) AS total "
                + "FROM facts f JOIN dims d ON f.k = d.k GROUP BY d.name, f.tag");
    List<String> rows = sorted(joined.collectAsList());
    String plan = joined.queryExecution().executedPlan().toString();
    rows.add("skewSplit=" + plan.contains("skew=true"));
    rows.add("coalesced=" + plan.contains("coalesced"));
    return rows;
  }
}
