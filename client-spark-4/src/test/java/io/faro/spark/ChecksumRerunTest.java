package io.faro.spark;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.max;
import static org.apache.spark.sql.functions.min;
import static org.assertj.core.api.Assertions.assertThat;

import io.faro.client.testing.MiniFaroCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.apache.spark.SparkConf;
import org.apache.spark.TaskContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF0;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Spark 4.1+ protects a job from a nondeterministic stage that runs again: it compares the
 * order-independent checksum of each re-run map with the first run's, and on a mismatch runs every
 * stage after it again, whole (SPARK-51756, SPARK-53575). Through Faro, with a real loss: stage A
 * writes rows tagged with its own attempt number; while stage B reads them, A's files vanish from
 * the workers; B's tasks after the loss fail to fetch, A runs again (new tags: another checksum),
 * and B, of which a task had already ended on A's first output, must run again whole, on A's second
 * output only. The answer then holds one tag per group; a mix of tags is a wrong answer (B's
 * earlier output read beside its re-run's).
 */
class ChecksumRerunTest {
  @TempDir static Path dir;
  private static MiniFaroCluster cluster;

  // Static: Spark runs the UDFs in this JVM (local mode).
  /** Tasks of stage B's first attempt seen at their first row. */
  private static final Set<Long> started = ConcurrentHashMap.newKeySet();

  /** Counted down once the listener deleted A's files. */
  private static final java.util.concurrent.CountDownLatch deleted =
      new java.util.concurrent.CountDownLatch(1);

  @BeforeAll
  static void start() throws Exception {
    cluster = MiniFaroCluster.start(dir, 3);
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aNondeterministicStageThatRunsAgainRunsEveryStageAfterItAgainWhole() throws Exception {
    SparkSession spark =
        SparkSession.builder()
            .config(
                new SparkConf()
                    // One task at a time: B's first task ends before the loss, its later ones
                    // start after it.
                    .setMaster("local[1]")
                    .setAppName("checksum-rerun")
                    .set("spark.ui.enabled", "false")
                    .set("spark.driver.host", "127.0.0.1")
                    .set("spark.sql.adaptive.enabled", "false")
                    .set("spark.sql.shuffle.partitions", "3")
                    .set("spark.sql.shuffle.orderIndependentChecksum.enabled", "true")
                    .set(
                        "spark.sql.shuffle.orderIndependentChecksum.enableFullRetryOnMismatch",
                        "true")
                    .set("spark.shuffle.manager", FaroShuffleManager.class.getName())
                    .set("spark.faro.master.endpoints", "127.0.0.1:" + cluster.masterPort())
                    .set("spark.faro.client.fetch.retries", "1")
                    .set("spark.faro.client.fetch.retry.wait", "10ms"))
            .getOrCreate();
    AtomicBoolean lost = new AtomicBoolean();
    List<Integer> stagesRun = java.util.Collections.synchronizedList(new ArrayList<>());
    SparkListener loseA =
        new SparkListener() {
          @Override
          public void onStageSubmitted(SparkListenerStageSubmitted submitted) {
            stagesRun.add(submitted.stageInfo().stageId());
          }

          @Override
          public void onTaskEnd(SparkListenerTaskEnd end) {
            // Stage 1 is B (0 is A): once one of its tasks ended, A's output goes.
            if (end.stageId() == 1
                && end.stageAttemptId() == 0
                && "Success".equals(end.reason().toString())
                && lost.compareAndSet(false, true)) {
              deleteFirstShuffle(spark.sparkContext().applicationId());
              deleted.countDown();
            }
          }
        };
    spark.sparkContext().addSparkListener(loseA);
    try {
      UserDefinedFunction attempt =
          org.apache
              .spark
              .sql
              .functions
              .udf(
                  (UDF0<Integer>) () -> TaskContext.get().stageAttemptNumber(),
                  DataTypes.IntegerType)
              .asNondeterministic();
      // Every task of B's first attempt but the first waits at its first row until A's files are
      // gone: the task after it (one task at a time) then reads after the loss, whatever the
      // listener's delay. The first task's end is what deletes them.
      UserDefinedFunction pause =
          org.apache
              .spark
              .sql
              .functions
              .udf(
                  (UDF1<Long, Long>)
                      id -> {
                        TaskContext task = TaskContext.get();
                        if (task.stageAttemptNumber() == 0
                            && started.add(task.taskAttemptId())
                            && started.size() > 1
                            && !deleted.await(60, java.util.concurrent.TimeUnit.SECONDS)) {
                          throw new IllegalStateException("A's files were not deleted in 60 s");
                        }
                        return id;
                      },
                  DataTypes.LongType)
              .asNondeterministic();
      List<Row> rows =
          spark
              .range(0, 4000, 1, 4)
              .select(col("id"), attempt.apply().as("tag"))
              .repartition(4, col("id")) // A: 4 maps, its rows tagged with A's attempt
              .select(pause.apply(col("id")).as("id"), col("tag"))
              .groupBy(col("id").mod(10).as("k")) // B: 4 maps, reading A
              .agg(count("*").as("n"), min("tag").as("lo"), max("tag").as("hi"))
              .collectAsList();

      assertThat(lost).as("A's files were deleted while B ran").isTrue();
      assertThat(rows).hasSize(10);
      assertThat(rows.stream().mapToLong(r -> r.getLong(1)).sum()).isEqualTo(4000);
      // A ran again (its rows carry a later attempt), and every group holds one attempt's rows.
      assertThat(rows)
          .allSatisfy(
              r ->
                  assertThat(r.getInt(2))
                      .as(
                          "group %s: tags %s to %s, stages run %s",
                          r.get(0), r.get(2), r.get(3), stagesRun)
                      .isEqualTo(r.getInt(3))
                      .isPositive());
    } finally {
      spark.sparkContext().removeSparkListener(loseA);
      spark.stop();
    }
  }

  /**
   * Deletes the files of the app's first shuffle (Faro's lowest shuffle id over every worker: A
   * registers before B) on every worker, as a lost disk would.
   */
  private static void deleteFirstShuffle(String sparkAppId) {
    try {
      List<Path> shuffleDirs = new ArrayList<>();
      for (Path workerDir : cluster.workerDirs()) {
        try (Stream<Path> apps = Files.list(workerDir)) {
          for (Path appDir :
              apps.filter(d -> d.getFileName().toString().startsWith(sparkAppId + "-")).toList()) {
            try (Stream<Path> shuffles = Files.list(appDir)) {
              shuffles.filter(Files::isDirectory).forEach(shuffleDirs::add);
            }
          }
        }
      }
      int first =
          shuffleDirs.stream()
              .mapToInt(p -> Integer.parseInt(p.getFileName().toString()))
              .min()
              .orElseThrow();
      for (Path dir : shuffleDirs) {
        if (Integer.parseInt(dir.getFileName().toString()) == first) {
          try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.toList()) {
              Files.delete(f);
            }
          }
        }
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
