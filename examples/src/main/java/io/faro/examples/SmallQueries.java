package io.faro.examples;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
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

  /**
   * The queries, by name, in the order of {@code small-queries.sql} beside this class; each reads
   * the views {@link #tables} registers.
   */
  static Map<String, String> queries() {
    String text;
    try (InputStream in = SmallQueries.class.getResourceAsStream("small-queries.sql")) {
      if (in == null) {
        throw new IllegalStateException("small-queries.sql is not on the class path");
      }
      text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return parseQueries(text);
  }

  /**
   * Blocks of a {@code -- name: N} line and the query's lines after it, up to the next name; other
   * lines that start with {@code --}, and blank ones, are comments.
   */
  static Map<String, String> parseQueries(String text) {
    Map<String, String> queries = new LinkedHashMap<>();
    String name = null;
    StringBuilder query = new StringBuilder();
    for (String line : (text + "\n-- name: ").split("\n")) {
      if (line.startsWith("-- name: ")) {
        if (name != null && queries.put(name, query.toString().trim()) != null) {
          throw new IllegalArgumentException("query " + name + " is named twice");
        }
        name = line.substring("-- name: ".length()).trim();
        query.setLength(0);
      } else if (!line.startsWith("--") && !line.isBlank()) {
        if (name == null) {
          throw new IllegalArgumentException("a query before the first name: " + line);
        }
        query.append(line).append('\n');
      }
    }
    return queries;
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
