package io.faro.worker;

import io.faro.common.process.ServerProcess;
import io.faro.worker.server.WorkerServer;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code faro worker}: runs one worker until the process is told to stop (SIGTERM, Ctrl-C). Flags
 * only build the configuration; everything else is {@link WorkerServer}'s.
 *
 * <p>Exit codes: 0 after a normal stop, 1 when the worker cannot start (disk, port, masters), 2 for
 * a configuration or usage error.
 */
@Command(
    name = "worker",
    description =
        "Runs a Faro worker: takes pushed shuffle data, writes partition files, serves fetches.",
    sortOptions = false)
public final class WorkerCommand implements Callable<Integer> {
  public static final int EXIT_START_FAILED = ServerProcess.EXIT_START_FAILED;
  public static final int EXIT_CONFIG_ERROR = ServerProcess.EXIT_CONFIG_ERROR;

  @Option(
      names = "--conf",
      paramLabel = "FILE",
      description = "Config file (key value per line), e.g. conf/faro-defaults.conf.")
  private Path confFile;

  @Option(
      names = "--set",
      paramLabel = "KEY=VALUE",
      description = "Sets one config key, over the file's value. Repeatable.")
  private Map<String, String> overrides = new LinkedHashMap<>();

  @Option(
      names = "--port-file",
      paramLabel = "FILE",
      description =
          "Once started, atomically write the worker's id, pid, ports and dirs here as JSON.")
  private Path portFile;

  @Option(
      names = {"-h", "--help"},
      usageHelp = true,
      description = "Shows this help.")
  private boolean help;

  @Spec private CommandSpec spec;

  private final ServerProcess process = new ServerProcess("worker");

  public static void main(String[] args) {
    System.exit(new CommandLine(new WorkerCommand()).execute(args));
  }

  @Override
  public Integer call() {
    return process.run(
        () -> {
          WorkerServer server = new WorkerServer(ServerProcess.configuration(confFile, overrides));
          server.settings().network().auth().offWarning("worker").ifPresent(process::remind);
          // A shutdown hook must outwait the graceful stop.
          process.closeWait(server.settings().leaving().gracefulTimeout().plusSeconds(30));
          // A drain that ended, or an operator's stop-worker, stops the process like SIGTERM.
          server.onExitRequest(this::stop);
          return server;
        },
        WorkerServer::start,
        WorkerServer::stopGracefully,
        WorkerCommand::describe,
        portFile,
        spec.commandLine().getErr());
  }

  /** Asks a running {@link #call()} to close the worker and return. Thread-safe. */
  public void stop() {
    process.stop();
  }

  private static Map<String, Object> describe(WorkerServer server) {
    Map<String, Object> fields = new LinkedHashMap<>();
    fields.put("workerId", server.workerId().value());
    fields.put("rpcPort", server.rpcPort());
    fields.put("pushPort", server.pushPort());
    fields.put("fetchPort", server.fetchPort());
    fields.put("httpPort", server.httpPort());
    fields.put(
        "dirs", server.settings().storage().dirs().stream().map(d -> d.path().toString()).toList());
    return fields;
  }
}
