package io.faro.bench.report;

import static java.util.Objects.requireNonNull;

import io.faro.bench.BenchSettings;
import io.faro.bench.run.RunResult;
import io.faro.bench.run.WorkerUsage;
import java.time.Instant;
import java.util.Map;

/**
 * A run with everything needed to read it later: settings, cluster, machine, date, and the figures
 * derived from the measurements. Throughputs and CPU per GB count record bytes (before
 * compression); MB is 2^20 bytes and GB 2^30.
 */
public record BenchReport(
    BenchSettings settings,
    String cluster,
    Map<String, String> clientConf,
    MachineFacts machine,
    Instant date,
    RunResult result) {
  static final double MB = 1 << 20;
  static final double GB = 1 << 30;

  public BenchReport {
    requireNonNull(settings, "settings is null");
    requireNonNull(cluster, "cluster is null");
    clientConf = Map.copyOf(clientConf);
    requireNonNull(machine, "machine is null");
    requireNonNull(date, "date is null");
    requireNonNull(result, "result is null");
  }

  public double pushMbPerSecond() {
    return perSecond(result.bytes() / MB, result.times().pushNanos());
  }

  /** Until the data is in closed files on the workers' disks: push plus commit. */
  public double pushAndCommitMbPerSecond() {
    return perSecond(
        result.bytes() / MB, result.times().pushNanos() + result.times().commitNanos());
  }

  public double fetchMbPerSecond() {
    return perSecond(result.bytes() / MB, result.times().fetchNanos());
  }

  /** Every worker's CPU for placement, push, commit and fetch, per GB of records. */
  public double workerCpuSecondsPerGb() {
    return workerIngestCpuSecondsPerGb() + workerFetchCpuSecondsPerGb();
  }

  public double workerIngestCpuSecondsPerGb() {
    return perGb(result.workers().stream().mapToLong(WorkerUsage::ingestCpuNanos).sum());
  }

  public double workerFetchCpuSecondsPerGb() {
    return perGb(result.workers().stream().mapToLong(WorkerUsage::fetchCpuNanos).sum());
  }

  /** This process's CPU (generating, pushing, reading and verifying records), per GB of records. */
  public double clientCpuSecondsPerGb() {
    return perGb(result.clientIngestCpuNanos() + result.clientFetchCpuNanos());
  }

  public double clientIngestCpuSecondsPerGb() {
    return perGb(result.clientIngestCpuNanos());
  }

  public double clientFetchCpuSecondsPerGb() {
    return perGb(result.clientFetchCpuNanos());
  }

  /** The largest peak of any one worker. */
  public double workerPeakRssMb() {
    return result.workers().stream().mapToLong(w -> w.end().peakRssBytes()).max().orElse(0) / MB;
  }

  public double workerPeakDirectMb() {
    return result.workers().stream().mapToLong(w -> w.end().peakDirectBytes()).max().orElse(0) / MB;
  }

  public double workerPeakBudgetMb() {
    return result.workers().stream().mapToLong(w -> w.end().peakBudgetBytes()).max().orElse(0) / MB;
  }

  public double workerPauseMb() {
    return result.workers().stream().mapToLong(w -> w.end().pauseBytes()).max().orElse(0) / MB;
  }

  /** Record bytes per stored byte: what the codec saved (stored bytes include batch headers). */
  public double compressionRatio() {
    return result.storedBytes() == 0 ? 0 : (double) result.bytes() / result.storedBytes();
  }

  private static double perSecond(double amount, long nanos) {
    return nanos <= 0 ? 0 : amount / (nanos / 1e9);
  }

  private double perGb(long cpuNanos) {
    return result.bytes() == 0 ? 0 : cpuNanos / 1e9 / (result.bytes() / GB);
  }
}
