package io.faro.cli.advise;

import io.faro.common.json.Json;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code faro advise}: reads Spark event logs and ranks applications by what moving their shuffles
 * to Faro would save ({@link Estimate}), naming those where it would cost more than it saves.
 */
@Command(
    name = "advise",
    mixinStandardHelpOptions = true,
    description = {
      "Reads Spark event logs (spark.eventLog.dir: plain, lz4 or zstd, one file or a rolling log"
          + " per application) and ranks the applications by the task time Faro would save them,"
          + " from their shuffles' blocks, bytes, write time, fetch wait and tasks; per shuffle"
          + " stage: bytes, blocks, average block size, write time, fetch-wait share of task time,"
          + " spill and the estimate.",
      "Prints a Markdown report; --json writes the same as JSON."
    })
public final class AdviseCommand implements Callable<Integer> {
  /** Applications saving at least this share of their task time are worth moving. */
  static final double WORTH_IT = 0.05;

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--event-logs",
      required = true,
      paramLabel = "PATH",
      description = "A directory of event logs (spark.eventLog.dir), or one application's log.")
  Path eventLogs;

  @Option(
      names = "--json",
      paramLabel = "FILE",
      description =
          "Also write the report as JSON to FILE (- for standard output, instead of"
              + " the Markdown).")
  String json;

  @Override
  public Integer call() throws IOException {
    List<EventLogFiles.Log> logs = EventLogFiles.find(eventLogs);
    List<AppLog> apps = new ArrayList<>();
    for (EventLogFiles.Log log : logs) {
      try {
        AppLog app = AppLog.read(log);
        if (app.events == 0) {
          spec.commandLine()
              .getErr()
              .println("advise: skipped " + log.name() + ": not a Spark event log");
          continue;
        }
        apps.add(app);
      } catch (IOException | RuntimeException e) {
        // One unreadable log does not hide the others.
        spec.commandLine()
            .getErr()
            .println("advise: skipped " + log.name() + ": " + e.getMessage());
      }
    }
    if (apps.isEmpty()) {
      throw new IOException("no event log found in " + eventLogs);
    }
    List<Ranked> ranked = rank(apps);
    PrintWriter out = spec.commandLine().getOut();
    if (json != null) {
      String text = Json.write(toJson(ranked));
      if (json.equals("-")) {
        out.print(text);
        out.flush();
        return 0;
      }
      Files.writeString(Path.of(json), text, StandardCharsets.UTF_8);
    }
    out.print(markdown(ranked));
    out.flush();
    return 0;
  }

  /** An application with its estimate and verdict. */
  record Ranked(AppLog app, double savedMillis, String verdict) {
    double share() {
      long task = app.taskMillis();
      return task == 0 ? 0 : savedMillis / task;
    }

    boolean estimated() {
      return !app.onFaro() && app.stages.values().stream().anyMatch(s -> s.reads() || s.writes());
    }
  }

  /** Most expected saving first; applications already on Faro or without shuffles last. */
  static List<Ranked> rank(List<AppLog> apps) {
    List<Ranked> ranked = new ArrayList<>();
    for (AppLog app : apps) {
      boolean shuffles = app.stages.values().stream().anyMatch(s -> s.reads() || s.writes());
      double saved = Estimate.saved(app);
      String verdict;
      if (app.onFaro()) {
        int fellBack = app.fallbacks.values().stream().mapToInt(Integer::intValue).sum();
        verdict =
            "runs on Faro already"
                + (fellBack == 0
                    ? ""
                    : "; "
                        + fellBack
                        + " shuffles fell back to the built-in shuffle ("
                        + app.fallbacks
                        + ")");
      } else if (!shuffles) {
        verdict = "no shuffle";
      } else if (saved <= 0) {
        verdict = "keep the built-in shuffle: Faro would cost more than it saves";
      } else if (saved >= WORTH_IT * app.taskMillis()) {
        verdict = "move to Faro";
      } else {
        verdict = "little to gain";
      }
      ranked.add(new Ranked(app, saved, verdict));
    }
    ranked.sort(
        Comparator.comparing((Ranked r) -> !r.estimated())
            .thenComparing(Comparator.comparingDouble(Ranked::savedMillis).reversed())
            .thenComparing(r -> r.app().appId));
    return ranked;
  }

  static String markdown(List<Ranked> ranked) {
    StringBuilder md = new StringBuilder();
    md.append("# Faro advice: ").append(ranked.size()).append(" applications\n\n");
    md.append(
        "| rank | application | name | user | shuffle written | blocks read | average block |"
            + " fetch wait | spilled | task time | est. saving | verdict |\n");
    md.append("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    int rank = 0;
    for (Ranked r : ranked) {
      appRow(md, ++rank, r);
    }
    for (Ranked r : ranked) {
      if (r.estimated()) {
        stageTable(md, r);
      }
    }
    md.append(
        "\nThe estimate is task time, not wall time: the built-in reader's cost per block, the"
            + " built-in writer's time blocked on its files, and the share of fetch wait Faro saves"
            + " by block size, less Faro's cost per byte pushed and its fixed costs per shuffle, map"
            + " task, reduce task and application; its constants were fitted on one machine. It"
            + " ranks; measure before believing it (see docs/operations.md, \"Advise\").\n");
    return md.toString();
  }

  /** The row of one application in the table of every application. */
  private static void appRow(StringBuilder md, int rank, Ranked r) {
    AppLog a = r.app();
    long written = a.stages.values().stream().mapToLong(s -> s.bytesWritten).sum();
    long blocks = a.stages.values().stream().mapToLong(s -> s.blocksRead).sum();
    long read = a.stages.values().stream().mapToLong(s -> s.bytesRead).sum();
    long wait = a.stages.values().stream().mapToLong(s -> s.fetchWaitMillis).sum();
    long spilled = a.stages.values().stream().mapToLong(s -> s.spilledBytes).sum();
    md.append("| ")
        .append(rank)
        .append(" | ")
        .append(cell(a.appId))
        .append(" | ")
        .append(cell(a.appName))
        .append(" | ")
        .append(cell(a.user))
        .append(" | ")
        .append(bytes(written))
        .append(" | ")
        .append(blocks)
        .append(" | ")
        .append(blocks == 0 ? "-" : bytes(read / blocks))
        .append(" | ")
        .append(seconds(wait))
        .append(" | ")
        .append(bytes(spilled))
        .append(" | ")
        .append(seconds(a.taskMillis()))
        .append(" | ")
        .append(r.estimated() ? saving(r) : "-")
        .append(" | ")
        .append(r.verdict())
        .append(" |\n");
  }

  /** The table of one application's shuffle stages, for an application with an estimate. */
  private static void stageTable(StringBuilder md, Ranked r) {
    AppLog a = r.app();
    md.append("\n## ").append(a.appId);
    if (!a.appName.isEmpty()) {
      md.append(" (").append(cell(a.appName)).append(")");
    }
    md.append("\n\n| stage | name | tasks | written | write time | read | blocks |")
        .append(" average block | fetch wait share | spilled | est. saving |\n")
        .append("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (AppLog.StageShuffle s : a.stages.values()) {
      if (!s.reads() && !s.writes()) {
        continue;
      }
      md.append("| ")
          .append(s.stageId)
          .append(" | ")
          .append(cell(shortName(s.name)))
          .append(" | ")
          .append(s.tasks)
          .append(" | ")
          .append(bytes(s.bytesWritten))
          .append(" | ")
          .append(s.writes() ? seconds(s.writeNanos / 1e6) : "-")
          .append(" | ")
          .append(bytes(s.bytesRead))
          .append(" | ")
          .append(s.blocksRead)
          .append(" | ")
          .append(s.reads() ? bytes(s.averageBlockBytes()) : "-")
          .append(" | ")
          .append(percent(s.runMillis == 0 ? 0 : (double) s.fetchWaitMillis / s.runMillis))
          .append(" | ")
          .append(bytes(s.spilledBytes))
          .append(" | ")
          .append(seconds(Estimate.saved(s)))
          .append(" |\n");
    }
    if (a.unreadableLines > 0) {
      md.append("\n")
          .append(a.unreadableLines)
          .append(" lines of its log were not JSON (a log still being written ends torn).\n");
    }
  }

  static Map<String, Object> toJson(List<Ranked> ranked) {
    List<Object> apps = new ArrayList<>();
    for (Ranked r : ranked) {
      AppLog a = r.app();
      Map<String, Object> app = new LinkedHashMap<>();
      app.put("app_id", a.appId);
      app.put("name", a.appName);
      app.put("user", a.user);
      app.put("log", a.logName);
      app.put("shuffle_manager", a.shuffleManager);
      app.put("duration_millis", a.endMillis > a.startMillis ? a.endMillis - a.startMillis : 0);
      app.put("task_millis", a.taskMillis());
      app.put("estimated", r.estimated());
      app.put("saved_task_millis", Math.round(r.savedMillis()));
      app.put("saved_share", Math.round(r.share() * 10000) / 10000.0);
      app.put("verdict", r.verdict());
      app.put("unreadable_lines", a.unreadableLines);
      app.put("fallbacks", new LinkedHashMap<>(a.fallbacks));
      List<Object> stages = new ArrayList<>();
      for (AppLog.StageShuffle s : a.stages.values()) {
        if (!s.reads() && !s.writes()) {
          continue;
        }
        Map<String, Object> stage = new LinkedHashMap<>();
        stage.put("stage_id", s.stageId);
        stage.put("name", s.name);
        stage.put("tasks", s.tasks);
        stage.put("task_millis", s.runMillis);
        stage.put("shuffle_bytes_written", s.bytesWritten);
        stage.put("shuffle_write_millis", Math.round(s.writeNanos / 1e6));
        stage.put("shuffle_bytes_read", s.bytesRead);
        stage.put("blocks_read", s.blocksRead);
        stage.put("average_block_bytes", s.averageBlockBytes());
        stage.put("fetch_wait_millis", s.fetchWaitMillis);
        stage.put("spilled_bytes", s.spilledBytes);
        stage.put("saved_task_millis", Math.round(Estimate.saved(s)));
        stages.add(stage);
      }
      app.put("stages", stages);
      apps.add(app);
    }
    return Map.of("applications", apps);
  }

  private static String saving(Ranked r) {
    return seconds(r.savedMillis()) + " (" + percent(r.share()) + ")";
  }

  private static String cell(String text) {
    return text.replace("|", "\\|").replace("\n", " ");
  }

  /** The first line of a stage name (Spark's call sites run long). */
  private static String shortName(String name) {
    String first = name.lines().findFirst().orElse("");
    return first.length() > 60 ? first.substring(0, 57) + "..." : first;
  }

  static String bytes(long b) {
    if (b < 1024) {
      return b + " B";
    }
    String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = b;
    int u = -1;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
  }

  static String seconds(double millis) {
    return String.format(Locale.ROOT, "%.2f s", millis / 1000);
  }

  static String percent(double share) {
    return String.format(Locale.ROOT, "%.1f%%", share * 100);
  }
}
