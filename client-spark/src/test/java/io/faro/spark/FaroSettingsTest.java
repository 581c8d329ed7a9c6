package io.faro.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.client.ClientOptions;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

/**
 * spark.faro.* settings that are not client settings: warned about, or refused under strict; and
 * the Spark settings the driver sets for dynamic allocation.
 */
class FaroSettingsTest {
  @Test
  void aMisspeltClientKeyIsIgnoredByDefault() {
    SparkConf conf =
        new SparkConf(false)
            .set("spark.faro.client.push.replicate", "true")
            .set("spark.faro.client.push.max.in.flight", "4");

    ClientSettingsView settings = new ClientSettingsView(FaroShuffleManager.settings(conf));

    assertThat(settings.replicate()).as("the misspelt key changed nothing").isFalse();
    assertThat(settings.maxInFlight()).isEqualTo(4);
  }

  @Test
  void strictRefusesItNamingTheSparkKeyAndTheKeyMeant() {
    SparkConf conf =
        new SparkConf(false)
            .set("spark.faro.config.strict", "true")
            .set("spark.faro.client.push.replicate", "true")
            .set("spark.faro.worker.dirs", "/data:ssd");

    assertThatThrownBy(() -> FaroShuffleManager.settings(conf))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(
            "spark.faro.client.push.replicate (did you mean spark.faro.client.push.replicate.enabled?)")
        .hasMessageContaining("spark.faro.worker.dirs")
        .hasMessageContaining("spark.faro.config.strict to false");
  }

  @Test
  void theDriverTellsSparkThatShuffleDataOutlivesExecutorsUnlessTheUserSaidOtherwise() {
    SparkConf unset = new SparkConf(false);
    DriverSettings.declareShuffleDataOutsideExecutors(unset, ClientOptions.FallbackPolicy.AUTO);
    assertThat(unset.get(DriverSettings.DATA_IO_KEY)).isEqualTo(FaroShuffleDataIO.class.getName());
    assertThat(unset.get(DriverSettings.SHUFFLE_TRACKING_KEY)).isEqualTo("false");
    // Reliable only as Faro's shuffle manager says (FallbackTest): not without it.
    assertThat(new FaroShuffleDataIO(unset).driver().supportsReliableStorage()).isFalse();

    SparkConf own =
        new SparkConf(false)
            .set(DriverSettings.DATA_IO_KEY, "com.example.OwnDataIO")
            .set(DriverSettings.SHUFFLE_TRACKING_KEY, "true");
    DriverSettings.declareShuffleDataOutsideExecutors(own, ClientOptions.FallbackPolicy.NEVER);
    assertThat(own.get(DriverSettings.DATA_IO_KEY)).isEqualTo("com.example.OwnDataIO");
    assertThat(own.get(DriverSettings.SHUFFLE_TRACKING_KEY)).isEqualTo("true");
  }

  @Test
  void withDynamicAllocationAndNoShuffleServiceAShuffleThatMayFallBackKeepsItsExecutors() {
    for (ClientOptions.FallbackPolicy policy : ClientOptions.FallbackPolicy.values()) {
      SparkConf dynamic = new SparkConf(false).set("spark.dynamicAllocation.enabled", "true");
      DriverSettings.declareShuffleDataOutsideExecutors(dynamic, policy);
      assertThat(dynamic.get(DriverSettings.SHUFFLE_TRACKING_KEY))
          .as("shuffle tracking under policy %s", policy)
          .isEqualTo(policy == ClientOptions.FallbackPolicy.NEVER ? "false" : "true");

      // With the external shuffle service, it serves the files of a shuffle that fell back.
      SparkConf withService =
          new SparkConf(false)
              .set("spark.dynamicAllocation.enabled", "true")
              .set("spark.shuffle.service.enabled", "true");
      DriverSettings.declareShuffleDataOutsideExecutors(withService, policy);
      assertThat(withService.get(DriverSettings.SHUFFLE_TRACKING_KEY)).isEqualTo("false");
    }
  }

  @Test
  void userClassPathFirstWithFarosJarAmongTheAppsJarsFailsAtOnceNamingTheSettings() {
    SparkConf both =
        new SparkConf(false)
            .set(DriverSettings.USER_CLASS_PATH_FIRST_KEY, "true")
            .set("spark.jars", "file:/apps/udfs.jar,file:/opt/faro/faro-client-spark-3-0.1.0.jar");
    assertThatThrownBy(() -> DriverSettings.checkClassLoading(both, java.util.Optional.empty()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("spark.executor.userClassPathFirst=true")
        .hasMessageContaining("faro-client-spark-3-0.1.0.jar")
        .hasMessageContaining("spark.executor.extraClassPath");
    // A renamed jar is known by the name the driver loaded Faro from.
    SparkConf renamed =
        new SparkConf(false)
            .set(DriverSettings.USER_CLASS_PATH_FIRST_KEY, "true")
            .set("spark.jars", "hdfs:/libs/shuffle.jar");
    assertThatThrownBy(
            () -> DriverSettings.checkClassLoading(renamed, java.util.Optional.of("shuffle.jar")))
        .isInstanceOf(IllegalArgumentException.class);

    // The jar only on the executors' class path: Faro carries the shuffle, nothing to refuse.
    DriverSettings.checkClassLoading(
        new SparkConf(false)
            .set(DriverSettings.USER_CLASS_PATH_FIRST_KEY, "true")
            .set("spark.jars", "file:/apps/udfs.jar")
            .set("spark.executor.extraClassPath", "/opt/faro/faro-client-spark-3-0.1.0.jar"),
        java.util.Optional.of("faro-client-spark-3-0.1.0.jar"));
    // Without userClassPathFirst, --jars is fine.
    DriverSettings.checkClassLoading(
        new SparkConf(false).set("spark.jars", "file:/opt/faro/faro-client-spark-3-0.1.0.jar"),
        java.util.Optional.empty());
  }

  @Test
  void thisClientIsBuiltForTheSparkItRunsOn() {
    String version = org.apache.spark.package$.MODULE$.SPARK_VERSION();
    assertThat(version).startsWith(SparkLine.NAME.equals("Spark 3.5") ? "3.5." : "4.");
  }

  private record ClientSettingsView(boolean replicate, int maxInFlight) {
    ClientSettingsView(io.faro.client.ClientSettings s) {
      this(s.replicate(), s.maxInFlight());
    }
  }

  @Test
  void aFallbackEventGoesToTheEventLogAndComesBackAsItWas() {
    FaroShuffleFallback event =
        new FaroShuffleFallback(
            7, "auto", FaroShuffleFallback.Kind.NOT_PLACED, "no worker with room");
    String json = org.apache.spark.util.JsonProtocol.sparkEventToJsonString(event);
    assertThat(json).contains("\"Event\":\"io.faro.spark.FaroShuffleFallback\"");
    org.apache.spark.scheduler.SparkListenerEvent back =
        org.apache.spark.util.JsonProtocol.sparkEventFromJson(json);
    assertThat(back)
        .isInstanceOfSatisfying(
            FaroShuffleFallback.class,
            f -> {
              assertThat(f.getShuffleId()).isEqualTo(7);
              assertThat(f.getPolicy()).isEqualTo("auto");
              assertThat(f.getKind()).isEqualTo(FaroShuffleFallback.Kind.NOT_PLACED);
              assertThat(f.getReason()).isEqualTo("no worker with room");
            });
  }

  @Test
  void sparksPushBasedShuffleIsTurnedOff() {
    SparkConf push = new SparkConf(false).set(DriverSettings.PUSH_BASED_SHUFFLE_KEY, "true");
    DriverSettings.turnOffPushBasedShuffle(push);
    assertThat(push.get(DriverSettings.PUSH_BASED_SHUFFLE_KEY)).isEqualTo("false");
  }
}
