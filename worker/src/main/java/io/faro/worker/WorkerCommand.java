package io.faro.worker;

import io.faro.common.config.ConfigException;
import io.faro.common.config.FaroConf;
import io.faro.worker.server.WorkerServer;
import io.faro.worker.storage.DiskDir;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code faro worker}: runs one worker until the process is told to stop (SIGTERM, Ctrl-C).
 * Flags only build the configuration; everything else is {@link WorkerServer}'s.
 *
 * <p>Exit codes: 0 after a normal stop, 1 when the worker cannot start (disk, port, masters),
 * 2 for a configuration or usage error.
 */
@Command(
    name = "worker",
    description = "Runs a Faro worker: takes pushed shuffle data, writes partition files, serves fetches.",
    sortOptions = false)
public final class WorkerCommand implements Callable<Integer> {
  public static final int EXIT_START_FAILED = 1;
  public static final int EXIT_CONFIG_ERROR = 2;

  @Option(names = "--conf", paramLabel = "FILE",
      description = "Config file (key value per line), e.g. conf/faro-defaults.conf.")
  private Path confFile;

  @Option(names = "--set", paramLabel = "KEY=VALUE",
      description = "Sets one config key, over the file's value. Repeatable.")
  private Map<String, String> overrides = new LinkedHashMap<>();

  @Option(names = "--port-file", paramLabel = "FILE",
      description = "Once started, atomically write the worker's id, pid, ports and dirs here as JSON.")
  private Path portFile;

  @Option(names = {"-h", "--help"}, usageHelp = true, description = "Shows this help.")
  private boolean help;

  @Spec
  private CommandSpec spec;

  private final CountDownLatch stopRequested = new CountDownLatch(1);
  private final CountDownLatch stopped = new CountDownLatch(1);

  public static void main(String[] args) {
    System.exit(new CommandLine(new WorkerCommand()).execute(args));
  }

  @Override
  public Integer call() {
    PrintWriter err = spec.commandLine().getErr();
    WorkerServer server;
    try {
      server = new WorkerServer(configuration());
    } catch (ConfigException e) {
      err.println("faro worker: " + e.getMessage());
      err.flush();
      return EXIT_CONFIG_ERROR;
    }
    try {
      server.start();
      if (portFile != null) {
        writePortFile(server);
      }
    } catch (RuntimeException | IOException e) {
      err.println("faro worker: cannot start: " + e.getMessage());
      err.flush();
      server.close();
      return EXIT_START_FAILED;
    }
    Thread hook = new Thread(this::stopAndWait, "faro-worker-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      stopRequested.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      server.close();
      stopped.countDown();
      removeHook(hook);
    }
    return 0;
  }

  /** Asks a running {@link #call()} to close the worker and return. Thread-safe. */
  public void stop() {
    stopRequested.countDown();
  }

  private void stopAndWait() {
    stop();
    try {
      // The JVM exits when hooks end: wait for call() to close the worker cleanly.
      stopped.await(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void removeHook(Thread hook) {
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // The JVM is already shutting down: the hook is running or done.
    }
  }

  private FaroConf configuration() {
    FaroConf conf = confFile == null ? FaroConf.empty() : FaroConf.load(confFile);
    return conf.withAll(FaroConf.of(overrides));
  }

  private void writePortFile(WorkerServer server) throws IOException {
    String dirs = server.settings().dirs().stream()
        .map(DiskDir::path)
        .map(p -> quote(p.toString()))
        .collect(Collectors.joining(","));
    String json = "{\"role\":\"worker\""
        + ",\"pid\":" + ProcessHandle.current().pid()
        + ",\"workerId\":" + quote(server.workerId().value())
        + ",\"rpcPort\":" + server.rpcPort()
        + ",\"pushPort\":" + server.pushPort()
        + ",\"fetchPort\":" + server.fetchPort()
        + ",\"dirs\":[" + dirs + "]}\n";
    Path target = portFile.toAbsolutePath();
    Files.createDirectories(target.getParent());
    // Readers poll for the file: they must never see it half written.
    Path temp = Files.createTempFile(target.getParent(), target.getFileName().toString(), ".tmp");
    try {
      Files.writeString(temp, json, StandardCharsets.UTF_8);
      Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(temp);
    }
  }

  /** A JSON string literal. */
  static String quote(String text) {
    StringBuilder out = new StringBuilder("\"");
    for (char c : text.toCharArray()) {
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    return out.append('"').toString();
  }
}
