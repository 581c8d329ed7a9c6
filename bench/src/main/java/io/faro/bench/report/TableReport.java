package io.faro.bench.report;

import io.faro.bench.BenchSettings;
import io.faro.bench.run.RunResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The report as a plain-text table for the terminal: one figure per line, with its unit. */
public final class TableReport {
  private TableReport() {}

  public static String write(BenchReport report) {
    StringBuilder out = header(report);
    List<String[]> rows = new ArrayList<>();
    addTimes(rows, report);
    addResources(rows, report);
    appendRows(out, rows);
    report.result().verification().examples().forEach(e -> out.append("  ").append(e).append('\n'));
    return out.toString();
  }

  /** What ran, on which cluster and machine. */
  private static StringBuilder header(BenchReport report) {
    BenchSettings s = report.settings();
    RunResult r = report.result();
    StringBuilder out = new StringBuilder();
    out.append(
        String.format(
            Locale.ROOT,
            "Faro bench: %s of %d-byte records (%s, %s), %d maps x %d partitions, "
                + "%d threads%n",
            size(r.bytes()),
            s.recordSize(),
            lower(s.data()),
            lower(s.codec()),
            s.maps(),
            s.partitions(),
            s.threads()));
    out.append("cluster: ").append(report.cluster()).append('\n');
    MachineFacts m = report.machine();
    out.append(
        String.format(
            Locale.ROOT,
            "machine: %d cores, %s memory, %s, %s, Java %s, load %.2f at start%n%n",
            m.cores(),
            size(m.memoryBytes()),
            m.cpuModel(),
            m.os(),
            m.javaVersion(),
            m.loadAverage()));
    return out;
  }

  /** Throughput and latency of push, commit and fetch. */
  private static void addTimes(List<String[]> rows, BenchReport report) {
    RunResult r = report.result();
    rows.add(row("push", report.pushMbPerSecond(), "MB/s", ms(r.times().pushNanos())));
    rows.add(row("commit", r.times().commitNanos() / 1e6, "ms", "until the files are closed"));
    rows.add(
        row(
            "push + commit",
            report.pushAndCommitMbPerSecond(),
            "MB/s",
            "until the data is on disk"));
    rows.add(
        row("fetch", report.fetchMbPerSecond(), "MB/s", ms(r.times().fetchNanos()) + ", verified"));
    rows.add(
        row(
            "push latency p50",
            r.pushLatency().p50Ms(),
            "ms",
            r.pushLatency().count() + " push requests"));
    rows.add(
        row(
            "push latency p99",
            r.pushLatency().p99Ms(),
            "ms",
            "sending each push request to its answer, every request of every map task"));
    rows.add(
        row(
            "batch cut p50 / p99",
            r.batchCuts().p50Ms(),
            "ms",
            format(r.batchCuts().p99Ms()) + " ms"));
    rows.add(
        row(
            "map finish p50 / p99",
            r.mapFinishes().p50Ms(),
            "ms",
            format(r.mapFinishes().p99Ms()) + " ms"));
  }

  /** CPU, memory and disk of workers and clients, compression and verification. */
  private static void addResources(List<String[]> rows, BenchReport report) {
    RunResult r = report.result();
    rows.add(
        row(
            "worker CPU",
            report.workerCpuSecondsPerGb(),
            "s/GB",
            "ingest "
                + format(report.workerIngestCpuSecondsPerGb())
                + ", fetch "
                + format(report.workerFetchCpuSecondsPerGb())));
    rows.add(
        row(
            "client CPU",
            report.clientCpuSecondsPerGb(),
            "s/GB",
            "ingest "
                + format(report.clientIngestCpuSecondsPerGb())
                + ", fetch "
                + format(report.clientFetchCpuSecondsPerGb())
                + "; generating and verifying records alone: "
                + format(r.workloadCpuSecondsPerGb())));
    rows.add(row("worker peak RSS", report.workerPeakRssMb(), "MB", "largest of any worker"));
    rows.add(row("worker peak direct", report.workerPeakDirectMb(), "MB", "sampled every 100 ms"));
    rows.add(
        row(
            "worker peak budget",
            report.workerPeakBudgetMb(),
            "MB",
            "pause mark " + format(report.workerPauseMb()) + " MB"));
    rows.add(
        new String[] {
          "worker disk I/O",
          String.join(
              ", ",
              r.workers().stream()
                  .flatMap(w -> w.end().diskIoModes().stream())
                  .distinct()
                  .toList()),
          "",
          "faro.worker.io.mode: direct (O_DIRECT) or buffered (page cache)"
        });
    rows.add(row("compression", report.compressionRatio(), "x", size(r.storedBytes()) + " stored"));
    rows.add(
        new String[] {
          "verified",
          r.verification().verified() ? "yes" : "NO",
          "",
          r.verification().verified()
              ? "records, bytes and checksum of every partition match"
              : r.verification().mismatchedPartitions() + " partitions differ"
        });
  }

  /**
   * Appends {@code rows} of name, value, unit and note, the first three columns aligned (values to
   * the right), as every bench table shows its figures.
   */
  public static void appendRows(StringBuilder out, List<String[]> rows) {
    int[] widths = new int[3];
    for (String[] row : rows) {
      for (int i = 0; i < 3; i++) {
        widths[i] = Math.max(widths[i], row[i].length());
      }
    }
    for (String[] row : rows) {
      out.append(
              String.format(
                      Locale.ROOT,
                      "%-" + widths[0] + "s  %" + widths[1] + "s %-" + widths[2] + "s  %s",
                      row[0],
                      row[1],
                      row[2],
                      row[3])
                  .stripTrailing())
          .append('\n');
    }
  }

  private static String[] row(String name, double value, String unit, String note) {
    return new String[] {name, format(value), unit, note};
  }

  /** A figure with as many decimals as its size deserves: 1234, 12.34, 0.123. */
  public static String format(double value) {
    return String.format(Locale.ROOT, value >= 100 ? "%.0f" : value >= 1 ? "%.2f" : "%.3f", value);
  }

  private static String ms(long nanos) {
    return String.format(Locale.ROOT, "%.2f s", nanos / 1e9);
  }

  private static String size(long bytes) {
    return bytes >= (1L << 30)
        ? String.format(Locale.ROOT, "%.2f GB", bytes / BenchReport.GB)
        : String.format(Locale.ROOT, "%.1f MB", bytes / BenchReport.MB);
  }

  private static String lower(Enum<?> value) {
    return value.name().toLowerCase(Locale.ROOT);
  }
}
