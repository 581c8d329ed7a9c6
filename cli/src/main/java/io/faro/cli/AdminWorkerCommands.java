package io.faro.cli;

import io.faro.common.config.ConfigOption;
import io.faro.common.json.Json;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.master.service.StatusFields;
import io.faro.proto.ClusterStatusRequest;
import io.faro.proto.ClusterStatusResponse;
import io.faro.proto.StopWorkerRequest;
import io.faro.proto.StopWorkerResponse;
import io.faro.proto.WorkerStatusP;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The {@code bin/faro admin} commands about workers as the masters see them: list them, wait for
 * one to serve (a rolling upgrade's step), and stop one gracefully.
 */
final class AdminWorkerCommands {
  private AdminWorkerCommands() {}

  /** Every worker the masters know, from the leader's status (one page of apps and shuffles). */
  static List<WorkerStatusP> workers(AdminEndpoints where, ClientPool pool) {
    MasterClient client =
        new MasterClient(pool, where.resolve(), where.timeout().plusSeconds(20), where.timeout());
    return client
        .callBlocking(
            ClusterStatusRequest.newBuilder().setPageSize(1).build(), ClusterStatusResponse.class)
        .getWorkersList();
  }

  /** One worker as a row of named fields, the same in the table, in JSON and in the API. */
  static Map<String, Object> row(WorkerStatusP w) {
    return StatusFields.worker(w);
  }

  @Command(
      name = "workers",
      mixinStandardHelpOptions = true,
      description = {
        "Lists every worker the masters know: whether it is alive, what it says it is doing"
            + " (serving, stopping, draining, drained; lost once the masters declared it so),"
            + " its admission (active, excluded, decommissioning, decommissioned), when its"
            + " process started and its allocated slots."
      })
  static final class Workers implements Callable<Integer> {
    @Mixin AdminEndpoints where = new AdminEndpoints();

    @Option(names = "--json", description = "Print one JSON object instead of a table.")
    boolean json;

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
      List<Map<String, Object>> rows = new ArrayList<>();
      try (ClientPool pool = where.pool()) {
        workers(where, pool).forEach(w -> rows.add(row(w)));
      }
      PrintWriter out = spec.commandLine().getOut();
      if (json) {
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("workers", rows);
        out.println(Json.write(report));
      } else {
        String format = "%-24s %-6s %-9s %-16s %-24s %6s%n";
        out.printf(Locale.ROOT, format, "ID", "ALIVE", "STATE", "ADMISSION", "STARTED", "SLOTS");
        for (Map<String, Object> r : rows) {
          long started = (Long) r.get("started_at_ms");
          out.printf(
              Locale.ROOT,
              format,
              r.get("id"),
              r.get("alive"),
              r.get("state"),
              r.get("admission"),
              started == 0 ? "-" : Instant.ofEpochMilli(started).toString(),
              r.get("allocated_slots"));
        }
      }
      out.flush();
      return 0;
    }
  }

  @Command(
      name = "await-worker",
      mixinStandardHelpOptions = true,
      description = {
        "Waits until the masters list worker ID in the given state, e.g. serving again after a"
            + " restart (a rolling upgrade waits for this before it moves to the next worker).",
        "Exit code: 0 once it is, 3 when --wait passed first."
      })
  static final class AwaitWorker implements Callable<Integer> {
    @Mixin AdminEndpoints where = new AdminEndpoints();

    @Mixin AdminCommand.WorkerIdOption id = new AdminCommand.WorkerIdOption();

    @Option(
        names = "--state",
        defaultValue = "serving",
        paramLabel = "STATE",
        description = "serving, stopping, draining, drained or lost (default: ${DEFAULT-VALUE}).")
    String state;

    @Option(
        names = "--started-after",
        defaultValue = "0",
        paramLabel = "EPOCH_MS",
        description =
            "Only a worker process started after this time (milliseconds since the epoch, by the"
                + " worker's own clock) counts: the restarted process, not the one before it.")
    long startedAfter;

    @Option(
        names = "--wait",
        defaultValue = "120s",
        paramLabel = "DURATION",
        description = "How long to wait (default: ${DEFAULT-VALUE}).")
    String wait;

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws InterruptedException {
      Duration limit = ConfigOption.parseDuration(wait);
      long deadline = System.nanoTime() + limit.toNanos();
      String last = "not listed";
      try (ClientPool pool = where.pool()) {
        while (true) {
          try {
            Optional<WorkerStatusP> found =
                workers(where, pool).stream()
                    .filter(w -> w.getWorkerId().equals(id.worker))
                    .findFirst();
            if (found.isPresent()) {
              Map<String, Object> row = row(found.get());
              last = row.get("state") + ", started at " + row.get("started_at_ms");
              if (row.get("state").equals(state) && found.get().getStartedAtMs() > startedAfter) {
                spec.commandLine().getOut().println("worker " + id.worker + " is " + state);
                spec.commandLine().getOut().flush();
                return 0;
              }
            }
          } catch (RuntimeException e) {
            last = "masters: " + Futures.unwrap(e).getMessage();
          }
          if (System.nanoTime() > deadline) {
            spec.commandLine()
                .getErr()
                .println(
                    "worker "
                        + id.worker
                        + " is not "
                        + state
                        + " after "
                        + wait
                        + " ("
                        + last
                        + ")");
            spec.commandLine().getErr().flush();
            return 3;
          }
          // The masters' status, asked again: another process's state, nothing to wait on.
          TimeUnit.MILLISECONDS.sleep(250);
        }
      }
    }
  }

  @Command(
      name = "stop-worker",
      mixinStandardHelpOptions = true,
      description = {
        "Stops worker ID. Gracefully (the default, as on SIGTERM): it leaves placement, answers"
            + " pushes with split so that clients move on, seals and records its open files (a"
            + " restart serves them to the jobs), then exits 0. With --no-graceful it exits at"
            + " once, and what it held uncommitted is lost. Returns once the worker has exited.",
        "A worker started by systemd with Restart=on-failure is not started again after it: use"
            + " systemctl restart for that."
      })
  static final class StopWorker implements Callable<Integer> {
    @Mixin AdminEndpoints where = new AdminEndpoints();

    @Mixin AdminCommand.WorkerIdOption id = new AdminCommand.WorkerIdOption();

    @Option(
        names = "--graceful",
        negatable = true,
        defaultValue = "true",
        fallbackValue = "true",
        description = "Seal open files before exiting (default: ${DEFAULT-VALUE}).")
    boolean graceful;

    @Option(
        names = "--worker-endpoint",
        paramLabel = "HOST:RPC_PORT",
        description = "Ask the worker here instead of looking it up in the masters' status.")
    String endpoint;

    @Option(
        names = "--stop-timeout",
        defaultValue = "120s",
        paramLabel = "DURATION",
        description =
            "How long to wait for the worker to seal and exit; above its"
                + " faro.worker.graceful.timeout (default: ${DEFAULT-VALUE}).")
    String stopTimeout;

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws InterruptedException {
      Duration limit = ConfigOption.parseDuration(stopTimeout);
      PrintWriter out = spec.commandLine().getOut();
      try (ClientPool pool = where.pool()) {
        HostPort rpc = endpoint != null ? HostPort.parse(endpoint) : lookUp(pool);
        StopWorkerResponse answer =
            Futures.await(
                pool.call(
                    rpc,
                    StopWorkerRequest.newBuilder()
                        .setWorkerId(id.worker)
                        .setGraceful(graceful)
                        .build(),
                    StopWorkerResponse.class,
                    limit),
                limit,
                "stop of worker " + id.worker + " at " + rpc);
        out.println(
            graceful
                ? "worker "
                    + id.worker
                    + " sealed "
                    + answer.getSealedLocations()
                    + " partition locations of "
                    + answer.getSealedShuffles()
                    + " shuffles"
                    + (answer.getUnsealedLocations() == 0
                        ? ""
                        : "; " + answer.getUnsealedLocations() + " could not be sealed")
                : "worker " + id.worker + " stops without sealing");
        out.flush();
        if (!awaitClosed(rpc, limit)) {
          spec.commandLine()
              .getErr()
              .println(
                  "worker " + id.worker + " still listens on " + rpc + " after " + stopTimeout);
          return 3;
        }
      }
      out.println("worker " + id.worker + " has exited");
      out.flush();
      return 0;
    }

    private HostPort lookUp(ClientPool pool) {
      return workers(where, pool).stream()
          .filter(w -> w.getWorkerId().equals(id.worker))
          .findFirst()
          .map(w -> new HostPort(w.getEndpoint().getHost(), w.getEndpoint().getRpcPort()))
          .orElseThrow(
              () ->
                  new IllegalArgumentException(
                      "the masters know no worker "
                          + id.worker
                          + " (see bin/faro admin workers), or name it with --worker-endpoint"));
    }

    /**
     * Whether the worker's RPC port refuses connections (the process exited) within {@code limit}.
     */
    private static boolean awaitClosed(HostPort rpc, Duration limit) throws InterruptedException {
      long deadline = System.nanoTime() + limit.toNanos();
      while (System.nanoTime() < deadline) {
        try (Socket socket = new Socket()) {
          socket.connect(new InetSocketAddress(rpc.host(), rpc.port()), 1000);
        } catch (IOException refused) {
          return true;
        }
        // A port of another process, tried again: nothing to wait on.
        TimeUnit.MILLISECONDS.sleep(200);
      }
      return false;
    }
  }
}
