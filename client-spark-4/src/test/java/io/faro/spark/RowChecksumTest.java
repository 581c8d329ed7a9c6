package io.faro.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.client.testing.MiniFaroCluster;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.MapOutputTrackerMaster;
import org.apache.spark.ShuffleStatus;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Spark 4.1+ checks that a re-run map wrote the same records as the first run by an
 * order-independent checksum each map reports in its status (SPARK-51756). Faro's writer reports
 * the real value: for the same job, every map's checksum equals the one the built-in shuffle
 * reports, and is not 0 (the value that turns the check off).
 */
class RowChecksumTest {
  @TempDir static Path dir;
  private static MiniFaroCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster = MiniFaroCluster.start(dir, 2);
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static SparkConf conf(String name) {
    return new SparkConf()
        .setMaster("local[2]")
        .setAppName(name)
        .set("spark.ui.enabled", "false")
        .set("spark.driver.host", "127.0.0.1")
        .set("spark.sql.shuffle.partitions", "7")
        .set("spark.sql.adaptive.enabled", "false")
        .set("spark.sql.autoBroadcastJoinThreshold", "-1")
        .set("spark.sql.shuffle.orderIndependentChecksum.enabled", "true");
  }

  /**
   * Runs an aggregation and a join (three shuffles) and answers each shuffle's map checksums, by
   * shuffle id and map index, with the job's result.
   */
  private static List<List<Long>> checksumsOf(SparkConf conf, List<String> result) {
    SparkSession spark = SparkSession.builder().config(conf).getOrCreate();
    try {
      spark
          .range(0, 20_000, 1, 5)
          .selectExpr("id % 101 AS k", "id AS v")
          .createOrReplaceTempView("t");
      spark.range(0, 101, 1, 3).selectExpr("id AS k", "id * 7 AS w").createOrReplaceTempView("u");
      spark
          .sql(
              "SELECT t.k, count(*) AS n, sum(v) AS s, max(w) AS m FROM t JOIN u ON t.k = u.k"
                  + " GROUP BY t.k ORDER BY t.k")
          .collectAsList()
          .forEach(row -> result.add(row.toString()));
      MapOutputTrackerMaster tracker = (MapOutputTrackerMaster) SparkEnv.get().mapOutputTracker();
      Map<Integer, List<Long>> byShuffle = new TreeMap<>();
      scala.jdk.javaapi.CollectionConverters.asJava(tracker.shuffleStatuses())
          .forEach((shuffle, status) -> byShuffle.put((Integer) shuffle, checksums(status)));
      return new ArrayList<>(byShuffle.values());
    } finally {
      spark.stop();
    }
  }

  private static List<Long> checksums(ShuffleStatus status) {
    List<Long> values = new ArrayList<>();
    for (MapStatus map : status.mapStatuses()) {
      values.add(map.checksumValue());
    }
    return values;
  }

  @Test
  void everyMapReportsTheChecksumTheBuiltInShuffleReports() {
    List<String> builtInResult = new ArrayList<>();
    List<List<Long>> builtIn = checksumsOf(conf("built-in"), builtInResult);
    List<String> faroResult = new ArrayList<>();
    List<List<Long>> faro =
        checksumsOf(
            conf("faro")
                .set("spark.shuffle.manager", FaroShuffleManager.class.getName())
                .set("spark.faro.master.endpoints", "127.0.0.1:" + cluster.masterPort()),
            faroResult);

    assertThat(faroResult).isEqualTo(builtInResult).hasSize(101);
    assertThat(builtIn).as("three shuffles: both sides of the join, the aggregation").hasSize(3);
    assertThat(builtIn.stream().flatMap(List::stream))
        .as("the built-in shuffle computes checksums here")
        .doesNotContain(0L);
    assertThat(faro).isEqualTo(builtIn);
  }
}
