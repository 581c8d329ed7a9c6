package io.faro.deploy;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * ansible-core from PyPI in a virtual environment of its own (made once under target/, with the
 * machine's python3), and playbooks of deploy/ansible run with it.
 */
final class Ansible {
  /** The release of ansible-core the role is tested with (its controller runs on Python 3.10+). */
  static final String ANSIBLE_CORE = "ansible-core==2.17.7";

  private final Path venv;
  private final Path playbooks;

  private Ansible(Path venv, Path playbooks) {
    this.venv = venv;
    this.playbooks = playbooks;
  }

  /**
   * The virtual environment at {@code venv}, made and given ansible-core when it lacks it, to run
   * the playbooks in {@code playbooks}.
   */
  static Ansible in(Path venv, Path playbooks) throws IOException, InterruptedException {
    return new Ansible(PythonVenv.ensure(venv, ANSIBLE_CORE), playbooks);
  }

  /** The venv's python, for the inventory's ansible_python_interpreter. */
  Path python() {
    return venv.resolve("bin/python");
  }

  /**
   * Runs {@code playbook} of deploy/ansible against {@code inventory} with {@code extraVars}
   * (key=value); its output goes to {@code log}. Returns the exit code.
   */
  int playbook(String playbook, Path inventory, Path log, Duration timeout, String... extraVars)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(venv.resolve("bin/ansible-playbook").toString());
    command.addAll(List.of("-i", inventory.toString()));
    for (String v : extraVars) {
      command.addAll(List.of("-e", v));
    }
    command.add(playbooks.resolve(playbook).toString());
    return run(command, log, timeout);
  }

  /** Checks the syntax of {@code playbook}; returns the exit code. */
  int syntaxCheck(String playbook, Path inventory, Path log)
      throws IOException, InterruptedException {
    return run(
        List.of(
            venv.resolve("bin/ansible-playbook").toString(),
            "--syntax-check",
            "-i",
            inventory.toString(),
            playbooks.resolve(playbook).toString()),
        log,
        Duration.ofMinutes(2));
  }

  private static int run(List<String> command, Path log, Duration timeout)
      throws IOException, InterruptedException {
    ProcessBuilder builder = new ProcessBuilder(command);
    // No colours, no cows, the controller's own temp dir; output as each task ends.
    builder.environment().put("ANSIBLE_NOCOLOR", "1");
    builder.environment().put("ANSIBLE_NOCOWS", "1");
    builder.environment().put("ANSIBLE_FORCE_COLOR", "0");
    builder
        .environment()
        .put("ANSIBLE_LOCAL_TEMP", log.getParent().resolve(".ansible-tmp").toString());
    builder
        .environment()
        .put("ANSIBLE_REMOTE_TEMP", log.getParent().resolve(".ansible-tmp").toString());
    builder.environment().put("PYTHONUNBUFFERED", "1");
    return Processes.runLogged(builder, log, timeout);
  }
}
