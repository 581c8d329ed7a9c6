package io.faro.spark;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.crc32;
import static org.apache.spark.sql.functions.length;
import static org.apache.spark.sql.functions.sum;
import static org.assertj.core.api.Assertions.assertThat;

import io.faro.client.testing.MiniFaroCluster;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.HashPartitioner;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;

/**
 * The writer's concatenating path, where one serialization stream writes every record of a map
 * straight into its partition's bytes: Kryo (relocatable with its default auto-reset) for RDD
 * records and UnsafeRow for SQL rows, with records both much smaller and much larger than the
 * streams' own buffers (4 KiB for a Kryo stream, 8 KiB for UnsafeRow's), and batches cut often.
 * Each job runs with Spark's built-in shuffle, then through a real Faro cluster; results must be
 * equal.
 */
class FaroKryoTest {
  @TempDir Path dir;

  private static SparkConf conf(String name) {
    return new SparkConf()
        .setMaster("local[3]")
        .setAppName(name)
        .set("spark.ui.enabled", "false")
        .set("spark.driver.host", "127.0.0.1")
        .set("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
        .set("spark.sql.shuffle.partitions", "13")
        .set("spark.sql.adaptive.enabled", "false");
  }

  /** Pairs of a key and a string of 10 to 20,000 characters (every hundredth one long). */
  private static List<String> pairs(SparkSession spark) {
    JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    JavaPairRDD<Integer, String> pairs =
        sc.parallelize(SparkJobs.numbers(20_000, 7), 5)
            .mapToPair(n -> new Tuple2<>(n % 211, ("v" + n).repeat(n % 100 == 0 ? 3_000 : 2)));
    // Each record with the partition it landed in: a record in the wrong partition shows.
    List<String> result =
        new ArrayList<>(
            SparkJobs.sorted(
                pairs
                    .partitionBy(new HashPartitioner(11))
                    .mapPartitionsWithIndex(
                        (index, records) -> {
                          List<String> out = new ArrayList<>();
                          records.forEachRemaining(
                              t -> out.add(index + ":" + t._1() + ":" + t._2().hashCode()));
                          return out.iterator();
                        },
                        false)
                    .collect()));
    result.addAll(
        SparkJobs.sorted(
            pairs
                .groupByKey(17)
                .mapValues(
                    values -> {
                      long sum = 0;
                      int count = 0;
                      for (String v : values) {
                        sum += v.length();
                        count++;
                      }
                      return count + "/" + sum;
                    })
                .collect()));
    return result;
  }

  /** SQL rows of 20 to 40,000 bytes, repartitioned by key and aggregated with their partition. */
  private static List<String> rows(SparkSession spark) {
    // Per partition and key: the count, the bytes, and a sum of every row's CRC-32, so that a row
    // with changed bytes shows, not only a missing or misplaced one.
    return SparkJobs.sorted(
        spark
            .range(0, 30_000, 1, 4)
            .selectExpr(
                "id % 97 AS k", "repeat(cast(id AS string), IF(id % 500 = 0, 8000, 3)) AS v")
            .repartition(13, col("k"))
            .selectExpr("spark_partition_id() AS p", "k", "v")
            .groupBy("p", "k")
            .agg(count("v"), sum(length(col("v"))), sum(crc32(col("v").cast("binary"))))
            .collectAsList());
  }

  @Test
  void kryoAndUnsafeRowRecordsOfEverySizeComeBackAsWithTheBuiltInShuffle() throws Exception {
    List<String> expectedPairs;
    List<String> expectedRows;
    SparkSession builtIn = SparkSession.builder().config(conf("built-in")).getOrCreate();
    try {
      expectedPairs = pairs(builtIn);
      expectedRows = rows(builtIn);
    } finally {
      builtIn.stop();
    }
    // The long values really are longer than Kryo's buffer and UnsafeRow's stream buffer.
    assertThat(expectedPairs).anyMatch(s -> s.matches(".*/[0-9]{5,}\\)"));
    assertThat(expectedRows).isNotEmpty();

    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir, 2, Map.of())) {
      SparkSession faro =
          SparkSession.builder()
              .config(
                  conf("faro")
                      .set("spark.shuffle.manager", FaroShuffleManager.class.getName())
                      .set("spark.faro.master.endpoints", "127.0.0.1:" + cluster.masterPort())
                      .set("spark.faro.client.push.batch.size", "8k")
                      // Through Faro or failed: a fallback to the built-in shuffle would pass.
                      .set("spark.faro.client.fallback.policy", "never"))
              .getOrCreate();
      try {
        assertThat(pairs(faro)).containsExactlyElementsOf(expectedPairs);
        assertThat(rows(faro)).containsExactlyElementsOf(expectedRows);
      } finally {
        faro.stop();
      }
    }
  }
}
