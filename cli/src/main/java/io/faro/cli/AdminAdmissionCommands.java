package io.faro.cli;

import io.faro.common.admission.AdmissionRules;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.proto.AdmissionRulesRequest;
import io.faro.proto.AdmissionRulesResponse;
import io.faro.proto.SetAdmissionRulesRequest;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code bin/faro admin admission}: the masters' admission rules (which applications may register;
 * see io.faro.common.admission.AdmissionRules), shown or replaced through the leader.
 */
@Command(
    name = "admission",
    mixinStandardHelpOptions = true,
    description = {
      "Shows or sets the masters' admission rules: which Spark applications may use Faro.",
      "Rules, one per line: admit|deny [user=U] [queue=Q] [name=GLOB] [percent=N]. The first"
          + " rule that matches an application decides; one that no rule matches is admitted."
          + " percent=N matches the applications whose name falls in N of 100 buckets (CRC32C"
          + " of the name), the same ones every time. A refused application falls back to"
          + " Spark's built-in shuffle, or fails, by its spark.faro.client.fallback.policy."
          + " Rules are checked when an application first registers, never against a running"
          + " one.",
      "Limits, in the same text: limit user=U|queue=Q [shuffles=N] [partitions=N] [bytes=SIZE]"
          + " (* for each user or queue on its own; SIZE like 500g): what the applications of a"
          + " user or queue may hold together. A new shuffle over a limit falls back (or fails)"
          + " by the application's policy; a shuffle already placed is never cut off. Usage:"
          + " bin/faro admin quotas."
    },
    subcommands = {AdminAdmissionCommands.Show.class, AdminAdmissionCommands.Set.class})
final class AdminAdmissionCommands implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  private static MasterClient client(AdminEndpoints where, ClientPool pool) {
    return new MasterClient(
        pool, where.resolve(), where.timeout().plusSeconds(20), where.timeout());
  }

  private static void print(PrintWriter out, AdmissionRulesResponse rules) {
    out.println(
        "# "
            + (rules.getRules().isEmpty()
                ? "no rules: every application is admitted"
                : rules.getRules().lines().count()
                    + " rules and limits, the first matching rule decides")
            + (rules.getSource().isEmpty() ? "" : "; from " + rules.getSource()));
    out.print(rules.getRules());
    out.flush();
  }

  @Command(
      name = "show",
      mixinStandardHelpOptions = true,
      description = "Prints the rules in force, in order, and where they came from.")
  static final class Show implements Callable<Integer> {
    @Mixin AdminEndpoints where = new AdminEndpoints();

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
      try (ClientPool pool = where.pool()) {
        print(
            spec.commandLine().getOut(),
            client(where, pool)
                .callBlocking(
                    AdmissionRulesRequest.getDefaultInstance(), AdmissionRulesResponse.class));
      }
      return 0;
    }
  }

  @Command(
      name = "set",
      mixinStandardHelpOptions = true,
      description = {
        "Replaces the rules with those in FILE (- for standard input; an empty file admits every"
            + " application), checked here first, then replicated by the masters.",
        "Refused when the masters read their rules from faro.master.admission.file."
      })
  static final class Set implements Callable<Integer> {
    @Mixin AdminEndpoints where = new AdminEndpoints();

    @Option(
        names = "--file",
        required = true,
        paramLabel = "FILE",
        description = "The rules, one per line (# starts a comment).")
    String file;

    @Option(
        names = "--reason",
        defaultValue = "",
        paramLabel = "TEXT",
        description = "Why, for the next operator (shown with the rules).")
    String reason;

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws IOException {
      String text =
          file.equals("-")
              ? new String(System.in.readAllBytes(), StandardCharsets.UTF_8)
              : Files.readString(Path.of(file), StandardCharsets.UTF_8);
      // Checked here, so that a typo is named before anything is sent.
      AdmissionRules.parse(text, "");
      try (ClientPool pool = where.pool()) {
        print(
            spec.commandLine().getOut(),
            client(where, pool)
                .callBlocking(
                    SetAdmissionRulesRequest.newBuilder().setRules(text).setReason(reason).build(),
                    AdmissionRulesResponse.class));
      }
      return 0;
    }
  }
}
