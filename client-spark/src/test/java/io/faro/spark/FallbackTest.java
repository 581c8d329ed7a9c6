package io.faro.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.client.testing.MiniFaroCluster;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerEvent;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * faro.client.fallback.policy with real Spark jobs in local mode: a shuffle Faro cannot carry uses
 * Spark's built-in shuffle under auto, with the reason logged, counted and posted as a {@link
 * FaroShuffleFallback} event, and the job's answer is the built-in shuffle's; under never the job
 * fails at once with the reason, naming the setting.
 */
class FallbackTest {
  @TempDir static Path dir;
  private static List<String> expectedTwoShuffles;

  @BeforeAll
  static void builtIn() {
    expectedTwoShuffles = run(conf("built-in"), SparkJobs::twoShuffles).result();
  }

  private static SparkConf conf(String name) {
    return new SparkConf()
        .setMaster("local[2]")
        .setAppName(name)
        .set("spark.ui.enabled", "false")
        .set("spark.driver.host", "127.0.0.1")
        .set("spark.shuffle.service.enabled", "false");
  }

  private static SparkConf faro(String name, String masters) {
    return conf(name)
        .set("spark.shuffle.manager", FaroShuffleManager.class.getName())
        .set("spark.faro.master.endpoints", masters);
  }

  /** What a job returned, the fallback events its driver posted and its manager's count. */
  private record Run(
      List<String> result,
      List<FaroShuffleFallback> events,
      Map<FaroShuffleFallback.Kind, Integer> counts,
      boolean reliableStorage) {}

  private static Run run(SparkConf conf, Function<SparkSession, List<String>> job) {
    SparkSession spark = SparkSession.builder().config(conf).getOrCreate();
    List<FaroShuffleFallback> events = new CopyOnWriteArrayList<>();
    try {
      spark
          .sparkContext()
          .addSparkListener(
              new SparkListener() {
                @Override
                public void onOtherEvent(SparkListenerEvent event) {
                  if (event instanceof FaroShuffleFallback f) {
                    events.add(f);
                  }
                }
              });
      List<String> result = job.apply(spark);
      // While the job's shuffles are live (Spark has not cleaned them): is shuffle data reliable?
      boolean reliable = spark.sparkContext().shuffleDriverComponents().supportsReliableStorage();
      Map<FaroShuffleFallback.Kind, Integer> counts =
          SparkEnv.get().shuffleManager() instanceof FaroShuffleManager m
              ? m.fallbacks()
              : Map.of();
      // The listener bus delivers on its own thread: wait (bounded) for every counted event.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      int total = counts.values().stream().mapToInt(Integer::intValue).sum();
      while (events.size() < total && System.nanoTime() < deadline) {
        Thread.onSpinWait();
      }
      return new Run(result, List.copyOf(events), counts, reliable);
    } finally {
      spark.stop();
    }
  }

  private static String closedPort() throws Exception {
    try (ServerSocket socket = new ServerSocket(0)) {
      return "127.0.0.1:" + socket.getLocalPort();
    }
  }

  @Test
  void withTheMastersUnreachableAutoRunsEveryShuffleOnTheBuiltInShuffleAndSaysWhy()
      throws Exception {
    String masters = closedPort();
    Run run =
        run(
            faro("auto-unreachable", masters)
                .set("spark.faro.client.fallback.connect.timeout", "1s"),
            SparkJobs::twoShuffles);

    assertThat(run.result()).containsExactlyElementsOf(expectedTwoShuffles);
    assertThat(run.counts())
        .containsExactly(Map.entry(FaroShuffleFallback.Kind.MASTERS_UNREACHABLE, 2));
    assertThat(run.events()).hasSize(2);
    for (FaroShuffleFallback event : run.events()) {
      assertThat(event.getPolicy()).isEqualTo("auto");
      assertThat(event.getKind()).isEqualTo(FaroShuffleFallback.Kind.MASTERS_UNREACHABLE);
      // The first shuffle waited for the masters; the second got the same answer at once.
      assertThat(event.getReason())
          .contains(masters)
          .contains("faro.client.fallback.connect.timeout");
    }
  }

  @Test
  void withTheMastersUnreachableNeverFailsTheJobNamingTheMastersAndTheSetting() throws Exception {
    String masters = closedPort();
    SparkConf conf =
        faro("never-unreachable", masters)
            .set("spark.faro.client.fallback.policy", "never")
            .set("spark.faro.client.fallback.connect.timeout", "1s");
    assertThatThrownBy(() -> run(conf, SparkJobs::twoShuffles))
        .hasStackTraceContaining("spark.faro.client.fallback.policy is never")
        .hasStackTraceContaining(masters)
        .hasStackTraceContaining("faro.client.fallback.connect.timeout");
  }

  @Test
  void aJobMixingFaroAndBuiltInShufflesGivesTheBuiltInShufflesAnswer() throws Exception {
    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir.resolve("mixed"), 2)) {
      Run run =
          run(
              faro("mixed", "127.0.0.1:" + cluster.masterPort())
                  .set("spark.faro.client.fallback.max.partitions", "50"),
              SparkJobs::twoShuffles);

      assertThat(run.result()).containsExactlyElementsOf(expectedTwoShuffles);
      // The 60-partition shuffle fell back; the 11-partition one went through Faro's workers.
      assertThat(run.counts()).containsExactly(Map.entry(FaroShuffleFallback.Kind.PARTITIONS, 1));
      assertThat(run.events())
          .singleElement()
          .satisfies(
              e -> {
                assertThat(e.getReason())
                    .contains("60 partitions")
                    .contains("faro.client.fallback.max.partitions");
              });
      assertThat(cluster.workers())
          .as("workers that received pushed bytes")
          .anySatisfy(
              w ->
                  assertThat(w.metrics().text())
                      .containsPattern("(?m)^faro_worker_pushed_bytes(_total)? [1-9]"));
    }
  }

  @Test
  void aClusterThatDoesNotPlaceTheShuffleInTimeHasItFallBack() throws Exception {
    // A master and no worker: no slot request is answered within the connect timeout.
    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir.resolve("no-workers"), 0)) {
      Run run =
          run(
              faro("not-placed", "127.0.0.1:" + cluster.masterPort())
                  .set("spark.faro.client.fallback.connect.timeout", "2s"),
              SparkJobs::twoShuffles);
      assertThat(run.result()).containsExactlyElementsOf(expectedTwoShuffles);
      assertThat(run.counts()).containsExactly(Map.entry(FaroShuffleFallback.Kind.NOT_PLACED, 2));
      assertThat(run.events())
          .allSatisfy(
              e ->
                  assertThat(e.getReason())
                      .contains("did not place it")
                      .contains("faro.client.fallback.connect.timeout"));
    }
  }

  @Test
  void anApplicationTheAdmissionRulesRefuseFallsBackUnderAutoAndFailsUnderNeverNamingTheRule()
      throws Exception {
    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir.resolve("admission"), 1)) {
      String masters = "127.0.0.1:" + cluster.masterPort();
      setRules(cluster, "deny name=legacy-*\n", "not yet");

      Run refused = run(faro("legacy-report", masters), SparkJobs::twoShuffles);
      assertThat(refused.result()).containsExactlyElementsOf(expectedTwoShuffles);
      assertThat(refused.counts()).containsExactly(Map.entry(FaroShuffleFallback.Kind.REFUSED, 2));
      assertThat(refused.events())
          .hasSize(2)
          .allSatisfy(
              e ->
                  assertThat(e.getReason())
                      .contains("admission rule 1 'deny name=legacy-*' (admin: not yet) refuses it")
                      .contains("name 'legacy-report'"));

      assertThatThrownBy(
              () ->
                  run(
                      faro("legacy-never", masters)
                          .set("spark.faro.client.fallback.policy", "never"),
                      SparkJobs::twoShuffles))
          .hasStackTraceContaining("spark.faro.client.fallback.policy is never")
          .hasStackTraceContaining("admission rule 1 'deny name=legacy-*'");

      Run admitted = run(faro("nightly", masters), SparkJobs::twoShuffles);
      assertThat(admitted.result()).containsExactlyElementsOf(expectedTwoShuffles);
      assertThat(admitted.counts()).isEmpty();
    }
  }

  /**
   * A quota on bytes held: the application's first shuffle goes through Faro (nothing held yet);
   * once the workers report its bytes, its next new shuffle falls back, while the first, already
   * placed, is read again from Faro's workers.
   */
  @Test
  void aUserOverItsByteQuotaHasNewShufflesFallBackAndItsPlacedShuffleStillServes()
      throws Exception {
    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir.resolve("quota"), 1)) {
      setRules(cluster, "limit user=* bytes=1k\n", "");
      Run run =
          run(faro("quota", "127.0.0.1:" + cluster.masterPort()), secondShuffleOverQuota(cluster));

      assertThat(run.result()).containsExactlyElementsOf(expectedTwoShuffles);
      assertThat(run.counts()).containsExactly(Map.entry(FaroShuffleFallback.Kind.QUOTA, 1));
      assertThat(run.events())
          .singleElement()
          .satisfies(
              e ->
                  assertThat(e.getReason())
                      .contains("is at its quota 'limit user=* bytes=1k'")
                      .contains("bytes held on the workers, at most 1024"));
    }
  }

  @Test
  void underNeverAShuffleOverAQuotaFailsTheJobAtRegistrationNotInItsTasks() throws Exception {
    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir.resolve("quota-never"), 1)) {
      setRules(cluster, "limit user=* bytes=1k\n", "");
      SparkConf conf =
          faro("quota-never", "127.0.0.1:" + cluster.masterPort())
              .set("spark.faro.client.fallback.policy", "never");
      assertThatThrownBy(() -> run(conf, secondShuffleOverQuota(cluster)))
          .hasStackTraceContaining("spark.faro.client.fallback.policy is never")
          .hasStackTraceContaining("is at its quota 'limit user=* bytes=1k'")
          .satisfies(
              e -> {
                java.io.StringWriter trace = new java.io.StringWriter();
                e.printStackTrace(new java.io.PrintWriter(trace));
                // Refused when Spark registered the shuffle: no map task ran to fail on it.
                assertThat(trace.toString()).doesNotContain("stage failure");
              });
    }
  }

  /**
   * Two shuffles (the answer of {@link SparkJobs#twoShuffles}); between them, waits until the
   * workers' bytes of the first put its user at the cluster's byte quota.
   */
  private static Function<SparkSession, List<String>> secondShuffleOverQuota(
      MiniFaroCluster cluster) {
    return spark -> {
      org.apache.spark.api.java.JavaSparkContext sc =
          org.apache.spark.api.java.JavaSparkContext.fromSparkContext(spark.sparkContext());
      org.apache.spark.api.java.JavaPairRDD<Integer, Long> counts =
          sc.parallelize(SparkJobs.numbers(50_000, 4), 6)
              .mapToPair(n -> new scala.Tuple2<>(n % 1009, 1L))
              .reduceByKey(Long::sum, 11);
      assertThat(counts.count()).isEqualTo(1009);
      awaitQuotaReached(cluster.masterHttpPort(), cluster.adminToken());
      return SparkJobs.sorted(
          counts
              .mapToPair(t -> new scala.Tuple2<>(t._1() % 97, t._2()))
              .reduceByKey(Long::sum, 60)
              .collect());
    };
  }

  /** Sets the masters' admission rules, as bin/faro admin admission set does. */
  private static void setRules(MiniFaroCluster cluster, String rules, String reason) {
    // An operator's change: it proves the admin secret.
    try (io.faro.common.network.ClientPool pool =
        new io.faro.common.network.ClientPool(
            "admin",
            io.faro.client.ClientSettings.from(cluster.clientConf()).network(),
            cluster.adminCredentials(),
            address -> io.faro.common.auth.Handshake.MASTER)) {
      new io.faro.common.master.MasterClient(
              pool,
              List.of(new io.faro.common.network.HostPort("127.0.0.1", cluster.masterPort())),
              java.time.Duration.ofSeconds(20),
              java.time.Duration.ofSeconds(5))
          .callBlocking(
              io.faro.proto.SetAdmissionRulesRequest.newBuilder()
                  .setRules(rules)
                  .setReason(reason)
                  .build(),
              io.faro.proto.AdmissionRulesResponse.class);
    }
  }

  /**
   * Waits until the master's /api/v1/quotas (an operators' page: the admin token) has some user at
   * (or over) its quota.
   */
  private static void awaitQuotaReached(int masterHttpPort, String adminToken) {
    java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
    io.faro.common.testing.Eventually.await(
        "the workers' bytes reported over the quota",
        java.time.Duration.ofSeconds(30),
        () -> {
          try {
            String body =
                http.send(
                        java.net.http.HttpRequest.newBuilder(
                                java.net.URI.create(
                                    "http://127.0.0.1:" + masterHttpPort + "/api/v1/quotas"))
                            .header("Authorization", "Bearer " + adminToken)
                            .build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString())
                    .body();
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> rows =
                (List<Map<String, Object>>)
                    ((Map<String, Object>) io.faro.common.json.Json.parse(body)).get("quotas");
            return rows.stream().anyMatch(r -> ((Number) r.get("use")).doubleValue() >= 1);
          } catch (java.io.IOException e) {
            return false;
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
          }
        });
  }

  @Test
  void withEveryShuffleOnFaroShuffleDataIsReliableStorage() throws Exception {
    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir.resolve("reliable"), 1)) {
      Run run = run(faro("reliable", "127.0.0.1:" + cluster.masterPort()), SparkJobs::twoShuffles);
      assertThat(run.result()).containsExactlyElementsOf(expectedTwoShuffles);
      assertThat(run.counts()).isEmpty();
      assertThat(run.reliableStorage()).isTrue();
    }
  }

  @Test
  void policyAlwaysTurnsFaroOffForTheApplication() {
    Run run =
        run(
            faro("always", "127.0.0.1:1").set("spark.faro.client.fallback.policy", "always"),
            SparkJobs::twoShuffles);
    assertThat(run.result()).containsExactlyElementsOf(expectedTwoShuffles);
    assertThat(run.counts()).containsExactly(Map.entry(FaroShuffleFallback.Kind.POLICY, 2));
    assertThat(run.events()).allSatisfy(e -> assertThat(e.getPolicy()).isEqualTo("always"));
  }
}
