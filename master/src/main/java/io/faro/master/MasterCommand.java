package io.faro.master;

import io.faro.common.config.ConfigException;
import io.faro.common.config.FaroConf;
import io.faro.master.server.MasterServer;
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
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code faro master}: runs one master until the process is asked to stop. Flags only become
 * config: {@code --conf} reads a file, each {@code --set key=value} overrides one key, and
 * {@link MasterServer} does the rest. Exit codes: 0 after a normal stop, 2 for bad config
 * (the message names the key), 1 when the master cannot start.
 */
@Command(
    name = "master",
    description = "Run a Faro master: worker membership, slot allocation, app and shuffle registry.",
    sortOptions = false)
public final class MasterCommand implements Callable<Integer> {
  static final int EXIT_BAD_CONFIG = 2;
  static final int EXIT_FAILED = 1;

  @Option(names = "--conf", paramLabel = "FILE",
      description = "Config file (key value per line), e.g. conf/faro-defaults.conf.")
  Path confFile;

  @Option(names = "--set", paramLabel = "KEY=VALUE",
      description = "Sets one config key, overriding the file; repeatable.")
  Map<String, String> overrides = new LinkedHashMap<>();

  @Option(names = "--port-file", paramLabel = "FILE",
      description = "After start, atomically writes {\"role\":\"master\",\"pid\":N,\"rpcPort\":N,"
          + "\"raftPort\":N} here, so a launcher can learn ephemeral ports.")
  Path portFile;

  @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
  boolean help;

  @Spec
  CommandLine.Model.CommandSpec spec;

  private final CountDownLatch stopped = new CountDownLatch(1);

  public static void main(String[] args) {
    System.exit(new CommandLine(new MasterCommand()).execute(args));
  }

  @Override
  public Integer call() {
    PrintWriter err = spec.commandLine().getErr();
    MasterServer server;
    try {
      server = new MasterServer(conf());
    } catch (ConfigException e) {
      err.println("faro master: " + e.getMessage());
      err.flush();
      return EXIT_BAD_CONFIG;
    }
    Thread hook = new Thread(() -> {
      server.close();
      stopped.countDown();
    }, "faro-master-shutdown");
    try {
      Runtime.getRuntime().addShutdownHook(hook);
      server.start();
      if (portFile != null) {
        writePortFile(portFile, server);
      }
      stopped.await();
      return 0;
    } catch (InterruptedException e) {
      // Interrupted by an embedding caller (a test, a launcher thread): stop like a shutdown.
      Thread.currentThread().interrupt();
      removeHook(hook);
      server.close();
      return 0;
    } catch (IOException | RuntimeException e) {
      err.println("faro master: cannot start: " + e.getMessage());
      err.flush();
      removeHook(hook);
      server.close();
      return EXIT_FAILED;
    }
  }

  private FaroConf conf() {
    FaroConf conf = confFile == null ? FaroConf.empty() : FaroConf.load(confFile);
    return conf.withAll(FaroConf.of(overrides));
  }

  private static void removeHook(Thread hook) {
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // The JVM is already shutting down; the hook runs anyway.
    }
  }

  /** Writes the file beside its target, then renames it, so a reader never sees half of it. */
  static void writePortFile(Path file, MasterServer server) throws IOException {
    String json = "{\"role\":\"master\",\"pid\":" + ProcessHandle.current().pid()
        + ",\"rpcPort\":" + server.rpcPort() + ",\"raftPort\":" + server.raftPort() + "}\n";
    Path absolute = file.toAbsolutePath();
    Path tmp = absolute.resolveSibling(absolute.getFileName() + ".tmp");
    Files.writeString(tmp, json, StandardCharsets.UTF_8);
    Files.move(tmp, absolute, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }
}
