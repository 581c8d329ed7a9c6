package io.faro.examples;

import java.util.List;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Runs the same shuffle-heavy Spark SQL job twice in local mode, first with Spark's built-in
 * shuffle, then through Faro, and prints both results. Exits with 1 if they differ.
 *
 * <p>Arguments: {@code --master-endpoints host:port[,host:port...]} and {@code --records N}.
 */
public final class ShuffleDemo {
  private ShuffleDemo() {}

  public static void main(String[] args) {
    String masters = null;
    long records = 2_000_000;
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--master-endpoints" -> masters = args[i + 1];
        case "--records" -> records = Long.parseLong(args[i + 1]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    if (masters == null) {
      throw new IllegalArgumentException("--master-endpoints is required");
    }
    String builtIn = run(conf("demo-built-in-shuffle"), records, "Spark's built-in shuffle");
    String faro =
        run(
            conf("demo-faro")
                .set("spark.shuffle.manager", "io.faro.spark.FaroShuffleManager")
                .set("spark.faro.master.endpoints", masters)
                .set("spark.shuffle.service.enabled", "false"),
            records,
            "Faro");
    boolean same = builtIn.equals(faro);
    System.out.println(
        same
            ? "RESULT: identical with Faro and with Spark's built-in shuffle."
            : "RESULT: DIFFERENT results with Faro and with Spark's built-in shuffle!");
    System.exit(same ? 0 : 1);
  }

  private static SparkConf conf(String name) {
    return new SparkConf()
        .setMaster("local[2]")
        .setAppName(name)
        .set("spark.ui.enabled", "false")
        .set("spark.driver.host", "127.0.0.1")
        .set("spark.sql.shuffle.partitions", "64")
        .set("spark.sql.adaptive.enabled", "true");
  }

  /** A group-by over a shuffle, joined back to a second shuffle, summarised in a few lines. */
  private static String run(SparkConf conf, long records, String label) {
    SparkSession spark = SparkSession.builder().config(conf).getOrCreate();
    try {
      long start = System.nanoTime();
      spark
          .range(0, records, 1, 8)
          .selectExpr("id % 1000 AS k", "id AS v", "sha1(CAST(id AS STRING)) AS s")
          .createOrReplaceTempView("events");
      List<Row> rows =
          spark
              .sql(
                  "SELECT g.k, g.n, g.total, g.maxs FROM "
                      + "(SELECT k, count(*) AS n, sum(v) AS total, max(s) AS maxs FROM events GROUP BY k) g "
                      + "JOIN (SELECT DISTINCT k FROM events WHERE v % 7 = 0) d ON g.k = d.k "
                      + "ORDER BY g.k")
              .collectAsList();
      long millis = (System.nanoTime() - start) / 1_000_000;
      long checksum = 0;
      for (Row r : rows) {
        checksum = checksum * 31 + r.toString().hashCode();
      }
      String summary =
          rows.size()
              + " groups, first "
              + rows.get(0)
              + ", last "
              + rows.get(rows.size() - 1)
              + ", checksum "
              + Long.toHexString(checksum);
      String manager = SparkEnv.get().shuffleManager().getClass().getName();
      System.out.println(
          "With " + label + " (" + manager + "): " + summary + " (" + millis + " ms)");
      return summary;
    } finally {
      spark.stop();
    }
  }
}
