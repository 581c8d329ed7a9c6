package io.faro.cli;

import io.faro.master.MasterCommand;
import io.faro.worker.WorkerCommand;
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
      CommandLine.HelpCommand.class
    })
public final class FaroCli implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    System.exit(run(args));
  }

  static int run(String... args) {
    return new CommandLine(new FaroCli()).setCaseInsensitiveEnumValuesAllowed(true).execute(args);
  }

  @Override
  public void run() {
    spec.commandLine().usage(System.out);
  }

  /** The version from the jar's manifest, or "dev" when run from classes. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = FaroCli.class.getPackage().getImplementationVersion();
      return new String[] {"faro " + (v == null ? "dev" : v)};
    }
  }
}
