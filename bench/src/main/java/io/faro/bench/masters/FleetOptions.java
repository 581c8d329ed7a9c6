package io.faro.bench.masters;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/** The options of {@code bench-masters}' fleet mode ({@link FleetBench}), and its plan. */
final class FleetOptions {
  @Option(
      names = "--simulated-workers",
      split = ",",
      description =
          "Fleet mode: the numbers of simulated workers (e.g. 100,1000) that register and "
              + "heartbeat every master from this process, measured at each of --live-shuffles; "
              + "no real worker runs, and neither registrations nor failovers are measured.")
  List<Integer> simulatedWorkers;

  @Option(
      names = "--live-shuffles",
      split = ",",
      defaultValue = "10,100,1000",
      description = "Fleet mode: the numbers of live shuffles (default: ${DEFAULT-VALUE}).")
  List<Integer> liveShuffles;

  @Option(
      names = "--phase-seconds",
      defaultValue = "60",
      description = "Fleet mode: seconds each phase is measured (default: ${DEFAULT-VALUE}).")
  int phaseSeconds;

  @Option(
      names = "--warmup-seconds",
      defaultValue = "30",
      description =
          "Fleet mode: seconds between reaching a phase's live shuffles and measuring it"
              + " (default: ${DEFAULT-VALUE}).")
  int warmupSeconds;

  @Option(
      names = "--shuffle-seconds",
      defaultValue = "30",
      description =
          "Fleet mode: a shuffle's mean lifetime, from its slot request to its unregistration"
              + " (default: ${DEFAULT-VALUE}).")
  int shuffleSeconds;

  @Option(
      names = "--shuffles-per-app",
      defaultValue = "10",
      description =
          "Fleet mode: shuffles an app places before it unregisters (default: ${DEFAULT-VALUE}).")
  int shufflesPerApp;

  @Option(
      names = "--connections",
      defaultValue = "8",
      description =
          "Fleet mode: connections to each master the simulated workers share (default:"
              + " ${DEFAULT-VALUE}).")
  int connections;

  /** Whether the fleet mode was asked for. */
  boolean chosen() {
    return simulatedWorkers != null;
  }

  /** Refuses values that cannot run; {@code partitions} is the command's --partitions. */
  void check(int partitions) {
    if (simulatedWorkers.isEmpty()
        || liveShuffles.isEmpty()
        || simulatedWorkers.stream().anyMatch(n -> n < 1)
        || liveShuffles.stream().anyMatch(n -> n < 1)
        || phaseSeconds < 1
        || warmupSeconds < 0
        || shuffleSeconds < 1
        || shufflesPerApp < 1
        || connections < 1
        || partitions < 1) {
      throw new IllegalArgumentException(
          "--simulated-workers, --live-shuffles, --phase-seconds, --shuffle-seconds,"
              + " --shuffles-per-app, --connections and --partitions must be positive");
    }
  }

  /**
   * The phases to run, with {@code partitions} per shuffle and at most {@code inFlight} slot
   * requests waiting; puts the load's settings into {@code report}.
   */
  FleetBench.Plan plan(int partitions, int inFlight, Map<String, Object> report) {
    report.put("partitions_per_shuffle", partitions);
    report.put("shuffle_seconds", shuffleSeconds);
    report.put("shuffles_per_app", shufflesPerApp);
    report.put("connections", connections);
    FleetLoad.Settings load =
        new FleetLoad.Settings(
            partitions,
            // faro.worker.heartbeat.interval and faro.client.app.heartbeat.interval, as shipped.
            Duration.ofSeconds(5),
            Duration.ofSeconds(10),
            Duration.ofSeconds(shuffleSeconds),
            shufflesPerApp,
            connections,
            inFlight);
    return new FleetBench.Plan(
        simulatedWorkers.stream().sorted().toList(),
        liveShuffles,
        Duration.ofSeconds(phaseSeconds),
        Duration.ofSeconds(warmupSeconds),
        load);
  }
}
