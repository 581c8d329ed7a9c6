package io.faro.cli;

import io.faro.cli.advise.AdviseCommand;
import io.faro.common.error.FaroException;
import io.faro.common.version.Compatibility;
import io.faro.master.MasterCommand;
import io.faro.worker.WorkerCommand;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ServiceLoader;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code bin/faro}: one launcher for every Faro process and tool. */
@Command(
    name = "faro",
    mixinStandardHelpOptions = true,
    versionProvider = FaroCli.Version.class,
    description = "Faro, a push-based remote shuffle service for Apache Spark.",
    subcommands = {
      MasterCommand.class,
      WorkerCommand.class,
      LocalClusterCommand.class,
      DemoCommand.class,
      DocsCommand.class,
      SecretCommand.class,
      AdminCommand.class,
      AdviseCommand.class,
      VersionCommand.class,
      CommandLine.HelpCommand.class
    })
public final class FaroCli implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    System.exit(run(args));
  }

  static int run(String... args) {
    return run(null, null, args);
  }

  /** Runs with the given output and error writers (null: the standard streams). */
  static int run(PrintWriter out, PrintWriter err, String... args) {
    CommandLine line =
        new CommandLine(new FaroCli())
            .setCaseInsensitiveEnumValuesAllowed(true)
            .setExecutionExceptionHandler(FaroCli::reportFailure);
    if (out != null) {
      line.setOut(out);
    }
    if (err != null) {
      line.setErr(err);
    }
    for (FaroSubcommand extra : ServiceLoader.load(FaroSubcommand.class)) {
      line.addSubcommand(extra);
    }
    return line.execute(args);
  }

  /**
   * Failures a user can act on (bad config, a cluster already running, an unreachable master) are
   * one line naming the command; anything else keeps its stack trace for a bug report.
   */
  private static int reportFailure(Exception e, CommandLine line, CommandLine.ParseResult parsed)
      throws Exception {
    if (e instanceof IllegalArgumentException
        || e instanceof IllegalStateException
        || e instanceof FaroException
        || e instanceof IOException) {
      line.getErr().println(line.getCommandSpec().qualifiedName() + ": " + e.getMessage());
      line.getErr().flush();
      return 1;
    }
    throw e;
  }

  @Override
  public void run() {
    spec.commandLine().usage(System.out);
  }

  /** The release, from the jars' manifests, or "dev" when run from classes. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"faro " + Compatibility.release()};
    }
  }
}
