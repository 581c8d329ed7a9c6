package io.faro.bench;

import io.faro.bench.cluster.BenchCluster;
import io.faro.bench.cluster.ClusterTarget;
import io.faro.bench.report.BenchReport;
import io.faro.bench.report.JsonReport;
import io.faro.bench.report.MachineFacts;
import io.faro.bench.report.ReportFiles;
import io.faro.bench.report.TableReport;
import io.faro.bench.run.RunFailedException;
import io.faro.bench.run.RunResult;
import io.faro.bench.run.ShuffleRun;
import io.faro.bench.workload.DataKind;
import io.faro.cli.FaroSubcommand;
import io.faro.common.config.FaroConf;
import io.faro.common.error.FaroException;
import io.faro.common.network.HostPort;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code faro bench}: pushes, commits, fetches and verifies one shuffle through the real client
 * library against a running cluster or a local one it starts, and reports throughput, latency, CPU
 * and memory as a table and as JSON. Exit codes: 0 verified, 1 failed or not verified, 2 bad
 * options.
 */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Benchmarks Faro without Spark: M map tasks push records into R partitions, the shuffle"
          + " commits, R readers fetch everything back and verify it (records, bytes and a"
          + " checksum per partition). Reports push and fetch MB/s, push latency, client and"
          + " worker CPU per GB and worker memory, as a table and optionally as JSON. Loopback"
          + " only for --local-cluster.",
      "Example: bin/faro bench --local-cluster --workers 1 --total-bytes 4g --json bench.json"
    })
public final class BenchCommand implements Callable<Integer>, FaroSubcommand {
  @Spec CommandSpec spec;

  @Option(
      names = "--masters",
      split = ",",
      paramLabel = "HOST:PORT",
      description = "Masters of a running cluster to benchmark.")
  List<String> masters = new ArrayList<>();

  @Option(
      names = "--local-cluster",
      description = "Start a local cluster (1 master, --workers workers) and stop it at the end.")
  boolean localCluster;

  @Option(names = "--workers", description = "Workers of the local cluster (default: 1).")
  Integer workers;

  @Option(
      names = "--work-dir",
      description =
          "Directory of the local cluster (default: a temporary one, removed at the end).")
  Path workDir;

  @Option(
      names = "--maps",
      defaultValue = "8",
      description = "Map tasks (default: ${DEFAULT-VALUE}).")
  int maps;

  @Option(
      names = "--partitions",
      defaultValue = "64",
      description = "Partitions (default: ${DEFAULT-VALUE}).")
  int partitions;

  @Option(
      names = "--total-bytes",
      defaultValue = "1g",
      converter = SizeConverter.class,
      paramLabel = "SIZE",
      description =
          "Record bytes all maps push together, e.g. 512m, 4g (default: ${DEFAULT-VALUE}).")
  long totalBytes;

  @Option(
      names = "--warmup",
      defaultValue = "256m",
      converter = SizeConverter.class,
      paramLabel = "SIZE",
      description =
          "Record bytes of an unmeasured run first, so that the JIT compilers of this process and "
              + "of the workers are done (their CPU would count otherwise); 0 for none (default: ${DEFAULT-VALUE}).")
  long warmup;

  @Option(
      names = "--record-size",
      defaultValue = "100",
      converter = SizeConverter.class,
      paramLabel = "SIZE",
      description = "Bytes per record (default: ${DEFAULT-VALUE}).")
  long recordSize;

  @Option(
      names = "--data",
      defaultValue = "compressible",
      converter = DataConverter.class,
      description = "compressible or random (default: ${DEFAULT-VALUE}).")
  DataKind data;

  @Option(
      names = "--codec",
      defaultValue = "lz4",
      converter = CodecConverter.class,
      description = "lz4, zstd or none: faro.client.compression.codec (default: ${DEFAULT-VALUE}).")
  Codec codec;

  @Option(
      names = "--threads",
      defaultValue = "2",
      description = "Map tasks run at once, and readers run at once (default: ${DEFAULT-VALUE}).")
  int threads;

  @Option(
      names = "--seed",
      defaultValue = "1",
      description = "Seed of the generated records (default: ${DEFAULT-VALUE}).")
  long seed;

  @Option(
      names = "--timeout",
      defaultValue = "60m",
      converter = DurationConverter.class,
      description = "Limit of the whole run, e.g. 90s, 30m (default: ${DEFAULT-VALUE}).")
  Duration timeout;

  @Option(
      names = "--json",
      paramLabel = "FILE",
      description = "Also write the report as JSON to FILE.")
  Path json;

  @Option(
      names = "--conf",
      paramLabel = "FILE",
      description =
          "Settings file: client settings here, and every setting of a local cluster's processes.")
  Path conf;

  @Option(
      names = "--set",
      paramLabel = "KEY=VALUE",
      description = "A faro.* client setting; repeatable.")
  Map<String, String> sets = new LinkedHashMap<>();

  @Override
  public Integer call() throws Exception {
    BenchSettings settings;
    try {
      settings = settings();
    } catch (ParameterException e) {
      // Checks across options happen after parsing; answer them as picocli answers a bad option
      // (exit 2).
      CommandLine line = spec.commandLine();
      return line.getParameterExceptionHandler()
          .handleParseException(e, line.getParseResult().originalArgs().toArray(String[]::new));
    }
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    MachineFacts machine = MachineFacts.detect(); // before the cluster adds its own load
    try (BenchCluster cluster = BenchCluster.open(settings.target(), settings.confFile())) {
      out.println("Faro bench against a " + cluster.describe());
      out.flush();
      FaroConf clientConf = settings.clientConf(cluster.masters());
      warmUp(settings, clientConf, cluster.expectedWorkers(), out, err);
      RunResult result = new ShuffleRun(settings, clientConf, cluster.expectedWorkers(), err).run();
      BenchReport report =
          new BenchReport(
              settings, cluster.describe(), clientConf.asMap(), machine, Instant.now(), result);
      out.println();
      out.print(TableReport.write(report));
      if (json != null) {
        ReportFiles.writeAtomically(json, JsonReport.write(report));
        out.println("JSON report: " + json.toAbsolutePath());
      }
      out.flush();
      return result.verification().verified() ? 0 : 1;
    } catch (RunFailedException
        | FaroException
        | IOException
        | UncheckedIOException
        | IllegalArgumentException
        | IllegalStateException e) {
      // Expected failures (unreachable cluster, failed task, bad setting) get one line, not a stack
      // trace.
      err.println("faro bench failed: " + e.getMessage());
      err.flush();
      return 1;
    }
  }

  private static void warmUp(
      BenchSettings settings,
      FaroConf clientConf,
      int expectedWorkers,
      PrintWriter out,
      PrintWriter err) {
    if (settings.warmupBytes() == 0) {
      return;
    }
    out.printf(
        Locale.ROOT,
        "Warm-up: %.0f MB, not measured%n",
        settings.warmupBytes() / (double) (1 << 20));
    out.flush();
    RunResult warm = new ShuffleRun(settings.warmup(), clientConf, expectedWorkers, err).run();
    if (!warm.verification().verified()) {
      throw new IllegalStateException(
          "the warm-up run read back other records than it wrote: "
              + warm.verification().examples());
    }
    out.println("Measured run:");
    out.flush();
  }

  /** The validated settings. @throws ParameterException naming the option at fault */
  BenchSettings settings() {
    CommandLine line = spec.commandLine();
    if (masters.isEmpty() == !localCluster) {
      throw new ParameterException(
          line, "give either --masters HOST:PORT[,...] (a running cluster) or --local-cluster");
    }
    if (!localCluster && (workers != null || workDir != null)) {
      throw new ParameterException(line, "--workers and --work-dir apply to --local-cluster only");
    }
    if (recordSize > Integer.MAX_VALUE) {
      throw new ParameterException(line, "--record-size is too large: " + recordSize);
    }
    try {
      ClusterTarget target =
          localCluster
              ? new ClusterTarget.Local(workers == null ? 1 : workers, Optional.ofNullable(workDir))
              : new ClusterTarget.Running(masters.stream().map(BenchCommand::parseMaster).toList());
      BenchSettings settings =
          new BenchSettings(
              target,
              Optional.ofNullable(conf),
              sets,
              maps,
              partitions,
              totalBytes,
              warmup,
              (int) recordSize,
              data,
              codec,
              threads,
              seed,
              timeout);
      if (conf != null && !Files.isRegularFile(conf)) {
        throw new IllegalArgumentException("--conf " + conf + " is not a readable file");
      }
      // Checks every client setting now, before a cluster is started for nothing.
      settings.clientConf(List.of(new HostPort("127.0.0.1", 1)));
      return settings;
    } catch (IllegalArgumentException e) { // ConfigException included: it names the key
      throw new ParameterException(line, e.getMessage(), e);
    }
  }

  private static HostPort parseMaster(String text) {
    try {
      return HostPort.parse(text);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("--masters takes host:port items, got '" + text + "'", e);
    }
  }
}
