package io.faro.cli;

import io.faro.common.config.ConfigOption;
import io.faro.common.config.FaroConf;
import io.faro.common.json.Json;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkOptions;
import io.faro.common.network.NetworkSettings;
import io.faro.common.process.ServerProcess;
import io.faro.master.service.StatusFields;
import io.faro.proto.EmptyResponse;
import io.faro.proto.MasterStatusRequest;
import io.faro.proto.MasterStatusResponse;
import io.faro.proto.SetWorkerAdmissionRequest;
import io.faro.proto.TransferLeaderRequest;
import io.faro.proto.WorkerAdmissionP;
import io.faro.proto.WorkerStatusRequest;
import io.faro.proto.WorkerStatusResponse;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code bin/faro admin}: operators' view of, and actions on, a running cluster. */
@Command(
    name = "admin",
    mixinStandardHelpOptions = true,
    description = "Operate a running Faro cluster.",
    subcommands = {
      AdminCommand.Masters.class,
      AdminCommand.TransferLeader.class,
      AdminCommand.ExcludeWorker.class,
      AdminCommand.DecommissionWorker.class,
      AdminCommand.IncludeWorker.class,
      AdminCommand.WorkerStatus.class,
      AdminWorkerCommands.Workers.class,
      AdminWorkerCommands.AwaitWorker.class,
      AdminWorkerCommands.StopWorker.class,
      AdminApiCommands.Apps.class,
      AdminApiCommands.Shuffles.class,
      AdminApiCommands.Quotas.class,
      AdminApiCommands.Disks.class,
      AdminApiCommands.HttpToken.class,
      AdminAdmissionCommands.class,
      AdminFeatureLevelCommands.class
    })
final class AdminCommand implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  @Command(
      name = "masters",
      mixinStandardHelpOptions = true,
      description = {
        "Asks every master for its own view: role (leader, follower, candidate, or "
            + "unreachable), term, applied and committed log index, the leader it knows, pid, "
            + "snapshot and the size of its copy of the state.",
        "Exit code: 0 when exactly one master leads and every master answered, 3 otherwise."
      })
  static final class Masters implements Callable<Integer> {
    @Mixin AdminEndpoints where = new AdminEndpoints();

    @Option(names = "--json", description = "Print one JSON object instead of a table.")
    boolean json;

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
      List<HostPort> masters = where.resolve();
      List<Map<String, Object>> rows = new ArrayList<>();
      try (ClientPool pool = where.pool()) {
        List<CompletableFuture<MasterStatusResponse>> answers = new ArrayList<>();
        for (HostPort master : masters) {
          answers.add(
              pool.call(
                  master, MasterStatusRequest.getDefaultInstance(), MasterStatusResponse.class));
        }
        for (int i = 0; i < masters.size(); i++) {
          rows.add(row(masters.get(i), answers.get(i), where.timeout()));
        }
      }
      long leaders = rows.stream().filter(r -> "leader".equals(r.get("role"))).count();
      boolean allAnswered = rows.stream().noneMatch(r -> r.containsKey("error"));
      PrintWriter out = spec.commandLine().getOut();
      if (json) {
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("masters", rows);
        report.put("leaders", leaders);
        out.println(Json.write(report));
      } else {
        printTable(out, rows);
      }
      out.flush();
      return leaders == 1 && allAnswered ? 0 : 3;
    }

    private static Map<String, Object> row(
        HostPort endpoint, CompletableFuture<MasterStatusResponse> answer, Duration timeout) {
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("endpoint", endpoint.toString());
      try {
        MasterStatusResponse s = Futures.await(answer, timeout, "status of master " + endpoint);
        // The endpoint asked stays first; the master's own fields follow, as on its status page.
        StatusFields.master(s)
            .forEach(
                (key, value) -> {
                  if (!key.equals("endpoint")) {
                    row.put(key, value);
                  }
                });
      } catch (RuntimeException e) {
        row.put("role", "unreachable");
        row.put("error", String.valueOf(Futures.unwrap(e).getMessage()));
      }
      return row;
    }

    private static void printTable(PrintWriter out, List<Map<String, Object>> rows) {
      String format = "%-6s %-22s %-11s %6s %9s %9s %-7s %8s %8s %7s %5s %8s%n";
      out.printf(
          Locale.ROOT,
          format,
          "ID",
          "ENDPOINT",
          "ROLE",
          "TERM",
          "APPLIED",
          "COMMITTED",
          "LEADER",
          "PID",
          "SNAPSHOT",
          "WORKERS",
          "APPS",
          "SHUFFLES");
      for (Map<String, Object> r : rows) {
        if (r.containsKey("error")) {
          out.printf(
              Locale.ROOT,
              "%-6s %-22s %-11s %s%n",
              "?",
              r.get("endpoint"),
              r.get("role"),
              r.get("error"));
          continue;
        }
        out.printf(
            Locale.ROOT,
            format,
            r.get("id"),
            r.get("endpoint"),
            r.get("role"),
            r.get("term"),
            r.get("applied_index"),
            r.get("commit_index"),
            r.get("leader_id"),
            r.get("pid"),
            r.get("snapshot_index"),
            r.get("alive_workers") + "/" + r.get("workers"),
            r.get("apps"),
            r.get("shuffles"));
      }
    }
  }

  @Command(
      name = "transfer-leader",
      mixinStandardHelpOptions = true,
      description =
          "Moves leadership to master ID (e.g. before restarting the leader for an upgrade); "
              + "returns once ID leads.")
  static final class TransferLeader implements Callable<Integer> {
    @Mixin AdminEndpoints where = new AdminEndpoints();

    @Option(
        names = "--to",
        required = true,
        paramLabel = "ID",
        description = "Id of the master that should lead.")
    String to;

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
      List<HostPort> masters = where.resolve();
      try (ClientPool pool = where.pool()) {
        // A transfer takes an election: give the leader longer than a usual call to answer.
        MasterClient client =
            new MasterClient(
                pool, masters, where.timeout().plusSeconds(30), where.timeout().plusSeconds(25));
        client.callBlocking(
            TransferLeaderRequest.newBuilder().setTo(to).build(), EmptyResponse.class);
      }
      spec.commandLine().getOut().println("master " + to + " leads");
      spec.commandLine().getOut().flush();
      return 0;
    }
  }

  @Command(
      name = "worker-status",
      mixinStandardHelpOptions = true,
      description =
          "One worker's own accounting (memory, CPU, appended, replicated and split counts), as JSON.")
  static final class WorkerStatus implements Callable<Integer> {
    @Option(
        names = "--worker",
        required = true,
        paramLabel = "HOST:RPC_PORT",
        description = "The worker's RPC endpoint.")
    String worker;

    @Option(
        names = "--timeout",
        defaultValue = "10s",
        paramLabel = "DURATION",
        description = "How long to wait for the answer (default: ${DEFAULT-VALUE}).")
    String timeout;

    @Option(
        names = "--conf",
        paramLabel = "FILE",
        description = "Settings file; with faro.tls.enabled, its certificate settings are used.")
    Path confFile;

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
      WorkerStatusResponse status;
      FaroConf conf =
          ServerProcess.configuration(confFile, Map.of()).with(NetworkOptions.IO_THREADS, "1");
      try (ClientPool pool = new ClientPool("faro-admin", NetworkSettings.from(conf))) {
        status =
            Futures.await(
                pool.call(
                    HostPort.parse(worker),
                    WorkerStatusRequest.getDefaultInstance(),
                    WorkerStatusResponse.class),
                ConfigOption.parseDuration(timeout),
                "status of worker " + worker);
      }
      Map<String, Object> fields = new LinkedHashMap<>();
      fields.put("worker", worker);
      // Every field, zeros too: a script reads counters without knowing proto3 defaults.
      status
          .getDescriptorForType()
          .getFields()
          .forEach(f -> fields.put(f.getName(), status.getField(f)));
      spec.commandLine().getOut().println(Json.write(fields));
      spec.commandLine().getOut().flush();
      return 0;
    }
  }

  /** The worker a command is about: --id, as the masters know it. */
  static final class WorkerIdOption {
    @Option(
        names = "--id",
        required = true,
        paramLabel = "WORKER",
        description = "The worker's id (see admin workers).")
    String worker;
  }

  /** Sets a worker's admission through the leader (replicated, survives failovers and restarts). */
  abstract static class WorkerAdmissionCommand implements Callable<Integer> {
    private final WorkerAdmissionP admission;
    private final String done;

    @Mixin AdminEndpoints where = new AdminEndpoints();

    @Mixin WorkerIdOption id = new WorkerIdOption();

    @Option(
        names = "--reason",
        defaultValue = "",
        paramLabel = "TEXT",
        description = "Why, for the next operator.")
    String reason;

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    WorkerAdmissionCommand(WorkerAdmissionP admission, String done) {
      this.admission = admission;
      this.done = done;
    }

    @Override
    public Integer call() {
      try (ClientPool pool = where.pool()) {
        MasterClient client =
            new MasterClient(
                pool, where.resolve(), where.timeout().plusSeconds(20), where.timeout());
        client.callBlocking(
            SetWorkerAdmissionRequest.newBuilder()
                .setWorkerId(id.worker)
                .setAdmission(admission)
                .setReason(reason)
                .build(),
            EmptyResponse.class);
      }
      spec.commandLine().getOut().println("worker " + id.worker + " " + done);
      spec.commandLine().getOut().flush();
      return 0;
    }
  }

  @Command(
      name = "exclude-worker",
      mixinStandardHelpOptions = true,
      description =
          "Stops placing new partitions on a worker (a suspect machine); it still serves its data.")
  static final class ExcludeWorker extends WorkerAdmissionCommand {
    ExcludeWorker() {
      super(WorkerAdmissionP.ADMISSION_EXCLUDED, "is excluded: no new slots");
    }
  }

  @Command(
      name = "decommission-worker",
      mixinStandardHelpOptions = true,
      description =
          "Takes a worker out for good: no new partitions; it continues its open ones elsewhere,"
              + " serves its data until every shuffle it holds is gone (or"
              + " faro.worker.decommission.timeout), then exits 0 and is listed decommissioned."
              + " include-worker cancels a drain in progress.")
  static final class DecommissionWorker extends WorkerAdmissionCommand {
    DecommissionWorker() {
      super(WorkerAdmissionP.ADMISSION_DECOMMISSIONING, "is decommissioning: no new slots");
    }
  }

  @Command(
      name = "include-worker",
      mixinStandardHelpOptions = true,
      description =
          "Lets an excluded, decommissioning or decommissioned worker take new partitions again"
              + " (a drain in progress stops).")
  static final class IncludeWorker extends WorkerAdmissionCommand {
    IncludeWorker() {
      super(WorkerAdmissionP.ADMISSION_ACTIVE, "takes new slots again");
    }
  }
}
