package io.faro.cli;

import io.faro.common.auth.Secret;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code faro secret --out FILE}: writes a new random secret (32 bytes, hex) to a file only its
 * owner may read, for faro.auth.cluster.secret.file or faro.auth.admin.secret.file. An existing
 * file is left alone unless --force: replacing a running cluster's secret locks its members out.
 */
@Command(
    name = "secret",
    mixinStandardHelpOptions = true,
    description =
        "Writes a new random secret to FILE, readable by its owner only: the cluster secret "
            + "(faro.auth.cluster.secret.file, the same file on every master and worker) or the "
            + "operators' (faro.auth.admin.secret.file).")
final class SecretCommand implements Callable<Integer> {
  @Option(names = "--out", required = true, paramLabel = "FILE", description = "Where to write.")
  Path out;

  @Option(
      names = "--force",
      description =
          "Replace FILE if it exists (every member holding the old secret is locked out).")
  boolean force;

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    if (Files.exists(out) && !force) {
      spec.commandLine()
          .getErr()
          .println(
              "faro secret: "
                  + out
                  + " exists; it may be a running cluster's secret. Use --force to replace it.");
      return 2;
    }
    try {
      if (out.toAbsolutePath().getParent() != null) {
        Files.createDirectories(out.toAbsolutePath().getParent());
      }
      Secret.writeNew(out);
    } catch (IOException e) {
      spec.commandLine().getErr().println("faro secret: cannot write " + out + ": " + e);
      return 1;
    }
    spec.commandLine()
        .getOut()
        .println("Wrote a new secret to " + out + " (readable by its owner only).");
    return 0;
  }
}
