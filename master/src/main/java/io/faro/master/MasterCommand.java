package io.faro.master;

import io.faro.common.process.ServerProcess;
import io.faro.master.server.MasterServer;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code faro master}: runs one master until the process is asked to stop. Flags only become
 * config: {@code --conf} reads a file, each {@code --set key=value} overrides one key, and {@link
 * MasterServer} does the rest. Exit codes: 0 after a normal stop, 2 for bad config (the message
 * names the key), 1 when the master cannot start.
 */
@Command(
    name = "master",
    description =
        "Run a Faro master: worker membership, slot allocation, app and shuffle registry.",
    sortOptions = false)
public final class MasterCommand implements Callable<Integer> {
  static final int EXIT_BAD_CONFIG = ServerProcess.EXIT_CONFIG_ERROR;
  static final int EXIT_FAILED = ServerProcess.EXIT_START_FAILED;

  @Option(
      names = "--conf",
      paramLabel = "FILE",
      description = "Config file (key value per line), e.g. conf/faro-defaults.conf.")
  Path confFile;

  @Option(
      names = "--set",
      paramLabel = "KEY=VALUE",
      description = "Sets one config key, overriding the file; repeatable.")
  Map<String, String> overrides = new LinkedHashMap<>();

  @Option(
      names = "--port-file",
      paramLabel = "FILE",
      description =
          "After start, atomically writes {\"role\":\"master\",\"pid\":N,\"rpcPort\":N,"
              + "\"raftPort\":N} here, so a launcher can learn ephemeral ports.")
  Path portFile;

  @Option(
      names = {"-h", "--help"},
      usageHelp = true,
      description = "Show this help and exit.")
  boolean help;

  @Spec CommandLine.Model.CommandSpec spec;

  private final ServerProcess process = new ServerProcess("master");

  public static void main(String[] args) {
    System.exit(new CommandLine(new MasterCommand()).execute(args));
  }

  @Override
  public Integer call() {
    return process.run(
        () -> {
          MasterServer server = new MasterServer(ServerProcess.configuration(confFile, overrides));
          server.config().network().auth().offWarning("master").ifPresent(process::remind);
          return server;
        },
        server -> {
          server.start();
          server.halted().thenAccept(process::fail);
        },
        server -> {
          Map<String, Object> fields = new LinkedHashMap<>();
          fields.put("rpcPort", server.rpcPort());
          fields.put("raftPort", server.raftPort());
          fields.put("masterId", server.masterId());
          fields.put("httpPort", server.httpPort());
          return fields;
        },
        portFile,
        spec.commandLine().getErr());
  }

  /** Asks a running {@link #call()} to close the master and return. Thread-safe. */
  public void stop() {
    process.stop();
  }
}
