package io.faro.deploy;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * ansible-core from PyPI in a virtual environment of its own (made once under target/, with the
 * machine's python3), and playbooks of deploy/ansible run with it.
 */
final class Ansible {
  /** The release of ansible-core the role is tested with (its controller runs on Python 3.10+). */
  static final String ANSIBLE_CORE = "ansible-core==2.17.7";

  /**
   * PyPI's ansible package of that ansible-core (its collections, containers.podman's connection
   * plugin among them), for playbooks run against containers without SSH.
   */
  static final String ANSIBLE_COLLECTIONS = "ansible==10.7.0";

  private final Path venv;
  private final Path playbooks;
  private final Map<String, String> environment;

  private Ansible(Path venv, Path playbooks, Map<String, String> environment) {
    this.venv = venv;
    this.playbooks = playbooks;
    this.environment = environment;
  }

  /**
   * The virtual environment at {@code venv}, made and given ansible-core when it lacks it, to run
   * the playbooks in {@code playbooks}.
   */
  static Ansible in(Path venv, Path playbooks) throws IOException, InterruptedException {
    return new Ansible(PythonVenv.ensure(venv, ANSIBLE_CORE), playbooks, Map.of());
  }

  /** As {@link #in}, with PyPI's ansible package (its collections) installed too. */
  static Ansible withCollections(Path venv, Path playbooks)
      throws IOException, InterruptedException {
    PythonVenv.ensure(venv, ANSIBLE_CORE);
    return new Ansible(PythonVenv.ensure(venv, ANSIBLE_COLLECTIONS), playbooks, Map.of());
  }

  /** This Ansible, its playbooks run with {@code environment} added (e.g. podman's settings). */
  Ansible withEnvironment(Map<String, String> environment) {
    return new Ansible(venv, playbooks, environment);
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

  private int run(List<String> command, Path log, Duration timeout)
      throws IOException, InterruptedException {
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.environment().putAll(environment);
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
