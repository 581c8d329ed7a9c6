package io.faro.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.client.testing.MiniFaroCluster;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real Spark jobs in local mode: each job runs first with Spark's built-in shuffle, then through a
 * real Faro cluster (one master, three workers), and the results must be equal.
 */
class FaroSparkTest {
  private static final Map<String, Function<SparkSession, List<String>>> JOBS =
      Map.of(
          "repartition", SparkJobs::repartition,
          "reduceByKey", SparkJobs::reduceByKey,
          "groupByKey", SparkJobs::groupByKey,
          "sortByKey", SparkJobs::sortByKey,
          "join", SparkJobs::join,
          "sql", SparkJobs::sqlAggregationAndSkewJoin);

  @TempDir static Path dir;
  private static MiniFaroCluster cluster;
  private static final Map<String, List<String>> builtIn = new HashMap<>();
  private static SparkSession faro;

  private static SparkConf baseConf(String name) {
    return new SparkConf()
        .setMaster("local[4]")
        .setAppName(name)
        .set("spark.ui.enabled", "false")
        .set("spark.driver.host", "127.0.0.1")
        .set("spark.shuffle.service.enabled", "false")
        .set("spark.sql.shuffle.partitions", "40")
        .set("spark.sql.autoBroadcastJoinThreshold", "-1")
        .set("spark.sql.adaptive.enabled", "true")
        .set("spark.sql.adaptive.coalescePartitions.enabled", "true")
        .set("spark.sql.adaptive.advisoryPartitionSizeInBytes", "16k")
        .set("spark.sql.adaptive.coalescePartitions.minPartitionSize", "1k")
        .set("spark.sql.adaptive.skewJoin.enabled", "true")
        .set("spark.sql.adaptive.skewJoin.skewedPartitionFactor", "2")
        .set("spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes", "64k");
  }

  @BeforeAll
  static void runBuiltInThenStartFaro() throws Exception {
    SparkSession spark = SparkSession.builder().config(baseConf("built-in")).getOrCreate();
    try {
      JOBS.forEach((name, job) -> builtIn.put(name, job.apply(spark)));
    } finally {
      spark.stop();
    }
    cluster = MiniFaroCluster.start(dir, 3, Map.of("faro.worker.chunk.size", "256k"));
    faro =
        SparkSession.builder()
            .config(
                baseConf("faro")
                    .set("spark.shuffle.manager", FaroShuffleManager.class.getName())
                    .set("spark.faro.master.endpoints", "127.0.0.1:" + cluster.masterPort())
                    // Small batches: many batches per map. The RDD jobs use Java serialization (the
                    // writer's
                    // stream-per-batch path), the SQL job UnsafeRow serialization (the
                    // concatenating path).
                    .set("spark.faro.client.push.batch.size", "8k"))
            .getOrCreate();
  }

  @AfterAll
  static void stop() {
    if (faro != null) {
      faro.stop();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  private static void assertSameAsBuiltIn(String job) {
    List<String> expected = builtIn.get(job);
    assertThat(expected).isNotEmpty();
    assertThat(JOBS.get(job).apply(faro)).containsExactlyElementsOf(expected);
  }

  @Test
  void repartition() {
    assertSameAsBuiltIn("repartition");
  }

  @Test
  void reduceByKey() {
    assertSameAsBuiltIn("reduceByKey");
  }

  @Test
  void groupByKey() {
    assertSameAsBuiltIn("groupByKey");
  }

  @Test
  void sortByKey() {
    assertSameAsBuiltIn("sortByKey");
  }

  @Test
  void join() {
    assertSameAsBuiltIn("join");
  }

  @Test
  void sqlAggregationAndSkewJoinWithAqe() {
    // The test is only meaningful if AQE really coalesced and split: the built-in plan proves it.
    assertThat(builtIn.get("sql")).contains("skewSplit=true", "coalesced=true");
    assertSameAsBuiltIn("sql");
  }

  /**
   * AQE splits the skewed partition of the SQL job (70% of the facts have key 0) into sub-reads by
   * map range. Each sub-read fetches only the chunks whose maps meet its range, and of those only
   * its maps' batches (the worker leaves the others out), so the sub-reads fetch the partition once
   * between them. Measured on this job: the workers served 1.001 times the bytes pushed to them
   * (the rest is the other side of the skew join, which Spark reads once per sub-read, as with its
   * own shuffle); 2.0 times when sub-reads fetched whole chunks (maps run 4 at a time and share
   * chunks), 5.2 times when they fetched the whole partition.
   */
  @Test
  void theSubReadsOfASkewedPartitionFetchItsBytesOnce() throws Exception {
    double[] before = workerTraffic();
    List<String> rows = SparkJobs.sqlAggregationAndSkewJoin(faro);
    double[] after = workerTraffic();
    assertThat(rows).containsExactlyElementsOf(builtIn.get("sql"));
    double pushed = after[0] - before[0];
    double fetched = after[1] - before[1];
    assertThat(pushed).isPositive();
    assertThat(fetched / pushed)
        .as("bytes served over bytes pushed (%s served, %s pushed)", fetched, pushed)
        .isLessThan(1.1);
    assertThat(after[2] - before[2]).as("bytes of other maps left out of sub-reads").isPositive();
  }

  /** The bytes every worker says it took in, served, and left out of answers to sub-reads. */
  private static double[] workerTraffic() throws Exception {
    double[] traffic = new double[3];
    for (io.faro.worker.server.WorkerServer worker : cluster.workers()) {
      io.faro.client.testing.Scrape scrape = io.faro.client.testing.Scrape.of(worker.httpPort());
      traffic[0] += scrape.value("faro_worker_pushed_bytes_total");
      traffic[1] += scrape.value("faro_worker_fetched_bytes_total");
      traffic[2] += scrape.value("faro_worker_fetch_left_out_bytes_total");
    }
    return traffic;
  }

  @Test
  void sparksShuffleMetricsAreWhatTheWorkersCounted() throws Exception {
    long[] seen = new long[5];
    java.util.concurrent.CountDownLatch jobEnded = new java.util.concurrent.CountDownLatch(1);
    org.apache.spark.scheduler.SparkListener listener =
        new org.apache.spark.scheduler.SparkListener() {
          @Override
          public void onTaskEnd(org.apache.spark.scheduler.SparkListenerTaskEnd end) {
            org.apache.spark.executor.TaskMetrics m = end.taskMetrics();
            if (m != null) {
              synchronized (seen) {
                seen[0] += m.shuffleWriteMetrics().bytesWritten();
                seen[1] += m.shuffleWriteMetrics().recordsWritten();
                seen[2] += m.shuffleReadMetrics().remoteBytesRead();
                seen[3] += m.shuffleReadMetrics().recordsRead();
                seen[4] += m.shuffleReadMetrics().localBytesRead();
              }
            }
          }

          @Override
          public void onJobEnd(org.apache.spark.scheduler.SparkListenerJobEnd end) {
            jobEnded.countDown();
          }
        };
    double[] before = workerTraffic();
    faro.sparkContext().addSparkListener(listener);
    try {
      long groups =
          org.apache.spark.api.java.JavaSparkContext.fromSparkContext(faro.sparkContext())
              .parallelize(java.util.stream.IntStream.range(0, 20_000).boxed().toList(), 4)
              .mapToPair(i -> new scala.Tuple2<>(i % 300, i))
              .groupByKey(6)
              .count();
      assertThat(groups).isEqualTo(300);
      // The bus delivers a job's task ends before its end.
      assertThat(jobEnded.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    } finally {
      faro.sparkContext().removeSparkListener(listener);
    }
    double[] after = workerTraffic();
    synchronized (seen) {
      assertThat(seen[1]).as("records written").isEqualTo(20_000);
      assertThat(seen[3]).as("records read").isEqualTo(20_000);
      assertThat(seen[0]).as("bytes written").isPositive();
      // Spark's bytes written are the bytes the workers took; its bytes read those they served.
      assertThat((double) seen[0]).isEqualTo(after[0] - before[0]);
      assertThat((double) seen[2]).isEqualTo(after[1] - before[1]);
      assertThat(seen[4]).as("local bytes read: none, every byte comes from a worker").isZero();
    }
  }

  @Test
  void shuffleDataReallyLandsOnFaroWorkers() throws Exception {
    assertThat(org.apache.spark.SparkEnv.get().shuffleManager())
        .isInstanceOf(FaroShuffleManager.class);
    String app = faro.sparkContext().applicationId();
    org.apache.spark.api.java.JavaPairRDD<Integer, Integer> shuffled =
        org.apache.spark.api.java.JavaSparkContext.fromSparkContext(faro.sparkContext())
            .parallelize(java.util.stream.IntStream.range(0, 10_000).boxed().toList(), 4)
            .mapToPair(i -> new scala.Tuple2<>(i % 100, i))
            .reduceByKey(Integer::sum, 5);
    assertThat(shuffled.count()).isEqualTo(100);
    long files = 0;
    for (Path workerDir : cluster.workerDirs()) {
      // Faro's app id is Spark's with a random suffix (see FaroShuffleManager).
      List<Path> appDirs;
      try (var list = java.nio.file.Files.list(workerDir)) {
        appDirs =
            list.filter(d -> d.getFileName().toString().startsWith(app + "-"))
                .filter(java.nio.file.Files::isDirectory)
                .toList();
      }
      for (Path appDir : appDirs) {
        try (var walk = java.nio.file.Files.walk(appDir)) {
          files += walk.filter(f -> f.toString().endsWith(".data")).count();
        }
      }
    }
    assertThat(files).as("partition files of app " + app + " on the Faro workers").isPositive();
  }

  @Test
  void badFaroSettingNamesTheSparkKey() {
    SparkConf conf = new SparkConf().set("spark.faro.client.push.batch.size", "huge");
    assertThatThrownBy(() -> FaroShuffleManager.settings(conf))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("spark.faro.client.push.batch.size");
  }
}
