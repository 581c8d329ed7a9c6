package io.faro.cli;

import io.faro.common.json.Json;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.common.version.FeatureLevel;
import io.faro.master.service.StatusFields;
import io.faro.proto.MasterStatusRequest;
import io.faro.proto.MasterStatusResponse;
import io.faro.proto.SetFeatureLevelRequest;
import java.io.PrintWriter;
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
import picocli.CommandLine.Parameters;

/**
 * {@code bin/faro admin feature-level}: the cluster's feature level (see {@link FeatureLevel}):
 * what each master supports, and raising it once every master does.
 */
@Command(
    name = "feature-level",
    mixinStandardHelpOptions = true,
    description = {
      "Shows or raises the cluster's feature level: what the masters write into their log and"
          + " snapshots, and the oldest wire protocol the cluster takes from clients.",
      "After a roll to a new release, every member runs it, but the cluster stays at the level"
          + " it had, so that each member can still be rolled back. Raise the level once the new"
          + " release is to stay: a level is never lowered, and a release that does not support"
          + " it refuses to run in the cluster."
    },
    subcommands = {AdminFeatureLevelCommands.Show.class, AdminFeatureLevelCommands.Set.class})
final class AdminFeatureLevelCommands implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  /** Every master's status fields, or its endpoint and why it did not answer. */
  static List<Map<String, Object>> masters(AdminEndpoints where, ClientPool pool) {
    List<HostPort> masters = where.resolve();
    List<CompletableFuture<MasterStatusResponse>> answers = new ArrayList<>();
    for (HostPort master : masters) {
      answers.add(
          pool.call(master, MasterStatusRequest.getDefaultInstance(), MasterStatusResponse.class));
    }
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int i = 0; i < masters.size(); i++) {
      Map<String, Object> row = new LinkedHashMap<>();
      try {
        row.putAll(
            StatusFields.master(
                Futures.await(answers.get(i), where.timeout(), "status of " + masters.get(i))));
      } catch (RuntimeException e) {
        row.put("endpoint", masters.get(i).toString());
        row.put("error", String.valueOf(Futures.unwrap(e).getMessage()));
      }
      rows.add(row);
    }
    return rows;
  }

  @Command(
      name = "show",
      mixinStandardHelpOptions = true,
      description = {
        "Prints the cluster's feature level (as the leader applied it), and for each master its"
            + " release and the levels it supports: the level can be raised to the lowest"
            + " highest level.",
        "Exit code: 0 when every master answered, 3 otherwise."
      })
  static final class Show implements Callable<Integer> {
    @Mixin AdminEndpoints where = new AdminEndpoints();

    @Option(names = "--json", description = "Print one JSON object instead of a table.")
    boolean json;

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
      List<Map<String, Object>> rows;
      try (ClientPool pool = where.pool()) {
        rows = masters(where, pool);
      }
      boolean allAnswered = rows.stream().noneMatch(r -> r.containsKey("error"));
      int level =
          rows.stream()
              .filter(r -> "leader".equals(r.get("role")))
              .mapToInt(r -> (Integer) r.get("feature_level"))
              .findFirst()
              .orElse(0);
      int raisable =
          allAnswered
              ? rows.stream().mapToInt(r -> (Integer) r.get("max_feature_level")).min().orElse(0)
              : 0;
      PrintWriter out = spec.commandLine().getOut();
      if (json) {
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("feature_level", level);
        report.put("highest_supported_by_all", raisable);
        report.put("masters", rows);
        out.println(Json.write(report));
      } else {
        out.println(
            "Cluster feature level: "
                + (level == 0
                    ? "unknown (no leader answered)"
                    : level + " (" + FeatureLevel.describe(level) + ")"));
        out.println(
            raisable == 0
                ? "Highest level every master supports: unknown (a master did not answer)"
                : "Highest level every master supports: "
                    + raisable
                    + (raisable > level && level > 0
                        ? " (raise with: bin/faro admin feature-level set " + raisable + ")"
                        : ""));
        String format = "%-6s %-22s %-10s %-26s %-9s %-8s%n";
        out.printf(
            Locale.ROOT, format, "ID", "ENDPOINT", "ROLE", "RELEASE", "SUPPORTS", "PROTOCOL");
        for (Map<String, Object> r : rows) {
          if (r.containsKey("error")) {
            out.printf(
                Locale.ROOT,
                "%-6s %-22s %-10s %s%n",
                "?",
                r.get("endpoint"),
                "unreachable",
                r.get("error"));
            continue;
          }
          out.printf(
              Locale.ROOT,
              format,
              r.get("id"),
              r.get("endpoint"),
              r.get("role"),
              r.get("release"),
              r.get("min_feature_level") + "-" + r.get("max_feature_level"),
              r.get("protocol_version"));
        }
      }
      out.flush();
      return allAnswered ? 0 : 3;
    }
  }

  @Command(
      name = "set",
      mixinStandardHelpOptions = true,
      description = {
        "Raises the cluster's feature level to LEVEL, through the leader, which first checks"
            + " that every master of the group supports it. From then on a roll back to a release"
            + " that does not support LEVEL is refused, and clients of an older wire protocol than"
            + " the level needs are refused with an error naming both versions.",
        "Exit code: 0 once the level is applied, 1 when refused."
      })
  static final class Set implements Callable<Integer> {
    @Mixin AdminEndpoints where = new AdminEndpoints();

    @Parameters(paramLabel = "LEVEL", description = "The level to raise the cluster to.")
    int level;

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
      MasterStatusResponse leader;
      try (ClientPool pool = where.pool()) {
        MasterClient client =
            new MasterClient(
                pool, where.resolve(), where.timeout().plusSeconds(20), where.timeout());
        leader =
            client.callBlocking(
                SetFeatureLevelRequest.newBuilder().setLevel(level).build(),
                MasterStatusResponse.class);
      }
      spec.commandLine()
          .getOut()
          .println(
              "Cluster feature level: "
                  + leader.getFeatureLevel()
                  + " ("
                  + FeatureLevel.describe(leader.getFeatureLevel())
                  + "), applied by leader "
                  + leader.getMasterId());
      spec.commandLine().getOut().flush();
      return 0;
    }
  }
}
