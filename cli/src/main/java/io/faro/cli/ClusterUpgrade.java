package io.faro.cli;

import io.faro.common.json.Json;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.proto.EmptyResponse;
import io.faro.proto.TransferLeaderRequest;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * {@code local-cluster upgrade}: rolls the members of a local cluster to another distribution, as
 * an operator rolls a fleet: masters first (followers, then the leader after it handed leadership
 * to an upgraded follower), each caught up with the group before the next goes, then the workers
 * one at a time with a graceful stop (SIGTERM: a worker seals its open files and the restarted one
 * serves them), each serving again before the next. A roll to a release that does not support the
 * cluster's feature level (a roll back after the level was raised) is refused before any member
 * stops.
 */
final class ClusterUpgrade {
  private static final Duration CATCH_UP_TIMEOUT = Duration.ofSeconds(90);
  private static final Duration VERSION_TIMEOUT = Duration.ofSeconds(60);

  /**
   * What a distribution says of itself ({@code bin/faro version --json}); a release from before
   * that command speaks protocol 1 and supports feature level 1 only.
   */
  record Target(Path home, String release, int maxFeatureLevel, int protocol) {
    static final String BEFORE_LEVELS = "a release before feature levels";

    static Target of(Path home) throws IOException {
      Path launcher = home.resolve("bin").resolve("faro");
      if (!Files.isExecutable(launcher) || !Files.isDirectory(home.resolve("lib"))) {
        throw new IllegalArgumentException(
            home + " is not a Faro distribution (no bin/faro and lib/ in it)");
      }
      Process p =
          new ProcessBuilder(launcher.toString(), "version", "--json")
              .redirectErrorStream(true)
              .start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      try {
        if (!p.waitFor(VERSION_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
          p.destroyForcibly();
          throw new IllegalStateException(launcher + " version did not answer in time");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while asking " + launcher + " its version");
      }
      int open = out.indexOf('{');
      int close = out.lastIndexOf('}');
      String json = open >= 0 && close > open ? out.substring(open, close + 1) : "";
      if (p.exitValue() != 0 || !json.contains("\"max_feature_level\"")) {
        return new Target(home, BEFORE_LEVELS, 1, 1);
      }
      return new Target(
          home,
          Json.string(json, "release"),
          (int) Json.number(json, "max_feature_level"),
          (int) Json.number(json, "protocol"));
    }

    String describe() {
      return home
          + (maxFeatureLevel == 1 && protocol == 1 && release.equals(BEFORE_LEVELS)
              ? " (a Faro release before feature levels: level 1 only)"
              : " (Faro " + release + ", feature levels up to " + maxFeatureLevel + ")");
    }
  }

  /** One member of the cluster as its directory describes it. */
  record Member(String name, String role, String masterId, List<String> command) {
    boolean master() {
      return role.equals("master");
    }
  }

  private final Path workDir;
  private final Target target;
  private final PrintWriter out;

  ClusterUpgrade(Path workDir, Target target, PrintWriter out) {
    this.workDir = workDir.toAbsolutePath();
    this.target = target;
    this.out = out;
  }

  /** Rolls {@code only} (a member's name), or every member when null. */
  void run(String only) throws IOException {
    List<Member> members = members();
    AdminEndpoints admin = admin(members);
    try (ClientPool pool = admin.pool()) {
      List<Map<String, Object>> masters = AdminFeatureLevelCommands.masters(admin, pool);
      int level = checkLevel(masters);
      String leader = leaderId(masters);
      List<Member> order = order(members, leader);
      if (only != null) {
        order = order.stream().filter(m -> m.name().equals(only)).toList();
        if (order.isEmpty()) {
          throw new IllegalArgumentException(
              "no member "
                  + only
                  + " in "
                  + workDir
                  + "; its members are "
                  + members.stream().map(Member::name).toList());
        }
      }
      for (Member m : order) {
        if (m.master() && m.masterId().equals(leader) && masters.size() > 1) {
          String next = upgradedFollower(masters, leader, order, m);
          transferLeader(admin, pool, next);
          out.printf("Master %s handed leadership to %s%n", leader, next);
          out.flush();
        }
        roll(m, admin, pool);
      }
      out.printf(
          "Rolled %d member(s) of %s to %s; the cluster stays at feature level %d%s%n",
          order.size(),
          workDir,
          target.describe(),
          level,
          target.maxFeatureLevel() > level
              ? " (raise it with: bin/faro admin feature-level set "
                  + target.maxFeatureLevel()
                  + ", after which a roll back to the release before is refused)"
              : "");
      out.flush();
    }
  }

  /**
   * The cluster's level, refusing a target that does not support it: members of that release would
   * misread what the masters wrote at that level.
   */
  private int checkLevel(List<Map<String, Object>> masters) {
    int level =
        masters.stream()
            .filter(r -> !r.containsKey("error"))
            .mapToInt(r -> (Integer) r.get("feature_level"))
            .max()
            .orElseThrow(
                () ->
                    new IllegalStateException("no master of " + workDir + " answered: " + masters));
    if (level > target.maxFeatureLevel()) {
      throw new IllegalStateException(
          "refusing to roll "
              + workDir
              + " to "
              + target.describe()
              + ": the cluster runs at feature level "
              + level
              + ", which that release does not support. A roll back is possible only before the"
              + " level is raised; a level is never lowered");
    }
    return level;
  }

  private static String leaderId(List<Map<String, Object>> masters) {
    return masters.stream()
        .filter(r -> "leader".equals(r.get("role")))
        .map(r -> (String) r.get("id"))
        .findFirst()
        .orElse("");
  }

  /** Masters first, the leader last of them, then the workers, each in the cluster's order. */
  private static List<Member> order(List<Member> members, String leader) {
    List<Member> order = new ArrayList<>();
    members.stream().filter(m -> m.master() && !m.masterId().equals(leader)).forEach(order::add);
    members.stream().filter(m -> m.master() && m.masterId().equals(leader)).forEach(order::add);
    members.stream().filter(m -> !m.master()).forEach(order::add);
    return order;
  }

  /** A follower already rolled (or, rolling the leader alone, any follower). */
  private static String upgradedFollower(
      List<Map<String, Object>> masters, String leader, List<Member> order, Member current) {
    for (Member m : order) {
      if (m == current) {
        break;
      }
      if (m.master()) {
        return m.masterId();
      }
    }
    return masters.stream()
        .map(r -> (String) r.get("id"))
        .filter(id -> id != null && !id.equals(leader))
        .findFirst()
        .orElseThrow(() -> new IllegalStateException("no other master to lead"));
  }

  private static void transferLeader(AdminEndpoints admin, ClientPool pool, String to) {
    // A transfer takes an election: give the leader longer than a usual call to answer.
    new MasterClient(
            pool, admin.resolve(), admin.timeout().plusSeconds(30), admin.timeout().plusSeconds(25))
        .callBlocking(TransferLeaderRequest.newBuilder().setTo(to).build(), EmptyResponse.class);
  }

  /** Points {@code m}'s command at the target and restarts it; a master must catch up after. */
  private void roll(Member m, AdminEndpoints admin, ClientPool pool) throws IOException {
    long commitBefore = m.master() ? highestCommit(admin, pool) : -1;
    Files.write(
        workDir.resolve(m.name()).resolve(ProcessLauncher.COMMAND_FILE),
        onDistribution(m.command(), target.home()));
    MemberRestart.Restarted restarted = MemberRestart.restart(workDir, m.name(), false);
    long caughtUpMs = m.master() ? awaitCaughtUp(m, commitBefore, admin, pool) : 0;
    out.printf(
        "Rolled %s to %s (pid %d): stopped in %d ms, serving again %d ms after the SIGTERM%s%n",
        m.name(),
        target.release(),
        restarted.pid(),
        restarted.stoppedMs(),
        restarted.unavailableMs(),
        m.master() ? ", caught up with the group " + caughtUpMs + " ms after it served" : "");
    out.flush();
  }

  private static long highestCommit(AdminEndpoints admin, ClientPool pool) {
    return AdminFeatureLevelCommands.masters(admin, pool).stream()
        .filter(r -> !r.containsKey("error"))
        .mapToLong(r -> ((Number) r.get("commit_index")).longValue())
        .max()
        .orElse(-1);
  }

  /**
   * Waits until master {@code m} follows or leads and applied what the group had committed before
   * it stopped: only then may the next master go, or the group could lose its majority of
   * up-to-date members.
   */
  private static long awaitCaughtUp(
      Member m, long commitBefore, AdminEndpoints admin, ClientPool pool) {
    long start = System.nanoTime();
    long deadline = start + CATCH_UP_TIMEOUT.toNanos();
    Map<String, Object> last = Map.of();
    while (System.nanoTime() < deadline) {
      Optional<Map<String, Object>> row =
          AdminFeatureLevelCommands.masters(admin, pool).stream()
              .filter(r -> m.masterId().equals(r.get("id")))
              .findFirst();
      if (row.isPresent()) {
        last = row.get();
        String role = String.valueOf(last.get("role"));
        long applied = ((Number) last.get("applied_index")).longValue();
        if ((role.equals("follower") || role.equals("leader")) && applied >= commitBefore) {
          return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        }
      }
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for " + m.name());
      }
    }
    throw new IllegalStateException(
        m.name()
            + " did not catch up with its group within "
            + CATCH_UP_TIMEOUT.toSeconds()
            + " s (it had to apply up to index "
            + commitBefore
            + "); its last status: "
            + last);
  }

  /**
   * {@code command} (a member's JVM command line) running from distribution {@code home}: its class
   * path, faro.home and logging configuration; every other option and argument as it was.
   */
  static List<String> onDistribution(List<String> command, Path home) {
    List<String> out = new ArrayList<>(command.size());
    for (int i = 0; i < command.size(); i++) {
      String arg = command.get(i);
      if (arg.equals("-cp") || arg.equals("-classpath")) {
        out.add(arg);
        out.add(home.resolve("lib") + "/*");
        i++;
      } else if (arg.startsWith("-Dfaro.home=")) {
        out.add("-Dfaro.home=" + home);
      } else if (arg.startsWith("-Dlog4j2.configurationFile=")) {
        out.add("-Dlog4j2.configurationFile=" + home.resolve("conf").resolve("log4j2.xml"));
      } else {
        out.add(arg);
      }
    }
    return out;
  }

  private List<Member> members() throws IOException {
    if (!Files.exists(workDir.resolve(LocalCluster.CLUSTER_FILE))) {
      throw new IllegalStateException(
          "no " + LocalCluster.CLUSTER_FILE + " in " + workDir + ": no cluster to upgrade");
    }
    List<Member> members = new ArrayList<>();
    for (ClusterFile.Entry e : ClusterFile.entries(workDir)) {
      List<String> command =
          Files.readAllLines(workDir.resolve(e.name()).resolve(ProcessLauncher.COMMAND_FILE));
      String role = command.contains("worker") ? "worker" : "master";
      members.add(
          new Member(e.name(), role, setting(command, "faro.master.id").orElse(""), command));
    }
    return members;
  }

  /**
   * How this tool reaches the masters: with the settings a master runs with (its settings file and
   * --set pairs: endpoints, secrets, TLS), which include the admin secret when the cluster has one.
   */
  private static AdminEndpoints admin(List<Member> members) {
    Member master =
        members.stream()
            .filter(Member::master)
            .findFirst()
            .orElseThrow(() -> new IllegalStateException("the cluster has no master"));
    AdminEndpoints admin = new AdminEndpoints();
    List<String> command = master.command();
    Map<String, String> sets = new LinkedHashMap<>();
    for (int i = 0; i + 1 < command.size(); i++) {
      if (command.get(i).equals("--conf")) {
        admin.confFile = Path.of(command.get(i + 1));
      } else if (command.get(i).equals("--set")) {
        String kv = command.get(i + 1);
        int eq = kv.indexOf('=');
        if (eq > 0) {
          sets.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
      }
    }
    admin.overrides = sets;
    admin.timeout = "10s";
    List<String> endpoints = new ArrayList<>();
    setting(command, "faro.master.endpoints")
        .ifPresent(v -> endpoints.addAll(List.of(v.split(","))));
    if (endpoints.isEmpty()) {
      throw new IllegalStateException("the masters' command names no faro.master.endpoints");
    }
    admin.endpoints = endpoints.stream().map(String::trim).filter(e -> !e.isEmpty()).toList();
    return admin;
  }

  private static Optional<String> setting(List<String> command, String key) {
    for (String arg : command) {
      if (arg.startsWith(key + "=")) {
        return Optional.of(arg.substring(key.length() + 1));
      }
    }
    return Optional.empty();
  }
}
