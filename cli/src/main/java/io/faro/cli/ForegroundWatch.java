package io.faro.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;

/**
 * What {@code local-cluster} in the foreground waits for besides Ctrl-C: the moment none of its
 * members runs any more, whoever stopped them ({@code local-cluster stop} from another shell, kill,
 * a crash), so that the launcher then exits instead of waiting for a Ctrl-C with nothing left to
 * stop.
 *
 * <p>A restart ({@code local-cluster restart}) stops a member and starts a new process in its
 * place, which is not this JVM's child: the members are therefore those cluster.json lists now, not
 * the processes this JVM started. While a restart marker says a restart is under way ({@link
 * ClusterFile#restarting}), the cluster is not gone however few of its processes run; and only once
 * nothing has run, with no restart under way, for a whole {@link #GRACE} does the wait end.
 *
 * <p>The members are other processes and cluster.json a file other processes rewrite: both are
 * polled, every {@link #POLL}.
 */
final class ForegroundWatch {
  static final Duration POLL = Duration.ofMillis(200);

  /**
   * How long nothing must run before the launcher exits: a margin for a restart that has not marked
   * itself yet when the last other member goes.
   */
  static final Duration GRACE = Duration.ofSeconds(2);

  /** How the cluster ended: whether {@code local-cluster stop} stopped it. */
  record Ended(boolean stopped) {}

  private final Path workDir;

  /** Pids whose exit the launcher reports itself, with the exit code (its children). */
  private final Set<Long> children;

  private final PrintStream out;
  private final PrintStream err;

  /** Each member's pid as cluster.json last said (kept when a read fails). */
  private final Map<String, ClusterFile.Entry> members = new HashMap<>();

  /** Pids seen running and not seen gone yet. */
  private final Set<Long> running = new HashSet<>();

  ForegroundWatch(
      Path workDir, List<LocalCluster.Member> started, PrintStream out, PrintStream err) {
    this.workDir = workDir;
    this.out = out;
    this.err = err;
    this.children = new HashSet<>();
    for (LocalCluster.Member m : started) {
      children.add(m.pid());
      running.add(m.pid());
      members.put(m.name(), new ClusterFile.Entry(m.name(), m.pid(), m.log().toString()));
    }
  }

  /**
   * Waits until no member has run, and no restart been under way, for {@link #GRACE}, and says how
   * the cluster ended; returns null as soon as {@code interrupted} holds (a Ctrl-C stops the
   * cluster: the shutdown hook has the say then).
   */
  Ended await(BooleanSupplier interrupted) throws InterruptedException {
    long goneSince = -1;
    boolean saidWaiting = false;
    while (!interrupted.getAsBoolean()) {
      // Markers first: a restart that ends between the two reads has named its new process in
      // cluster.json before it removed its marker, so one of the two reads sees it.
      List<String> restarts = ClusterFile.restartsUnderWay(workDir);
      refresh();
      boolean anyRuns = false;
      for (ClusterFile.Entry member : members.values()) {
        if (ProcessLauncher.running(member.pid())) {
          anyRuns = true;
        } else if (running.remove(member.pid()) && !children.contains(member.pid())) {
          // The launcher reports its children's exits itself, with their exit code.
          err.println(member.name() + " (pid " + member.pid() + ") exited; see " + member.log());
        }
      }
      if (anyRuns) {
        goneSince = -1;
        saidWaiting = false;
      } else if (!restarts.isEmpty()) {
        goneSince = -1;
        if (!saidWaiting) {
          out.println(
              "No member of the local cluster runs, but "
                  + String.join(", ", restarts)
                  + (restarts.size() == 1
                      ? " is being restarted: waiting for it."
                      : " are being restarted: waiting for them."));
          saidWaiting = true;
        }
      } else if (goneSince < 0) {
        goneSince = System.nanoTime();
      } else if (System.nanoTime() - goneSince >= GRACE.toNanos()) {
        return new Ended(ClusterFile.stopped(workDir));
      }
      // Other processes and a file they rewrite: nothing to wait on but the next look.
      Thread.sleep(POLL.toMillis());
    }
    return null;
  }

  /** Takes each member's pid from cluster.json, and says which run under a new one. */
  private void refresh() {
    List<ClusterFile.Entry> now;
    try {
      now = ClusterFile.entries(workDir);
    } catch (IOException e) {
      return; // removed, or moved aside by hand: the pids last read still say who runs
    }
    for (ClusterFile.Entry entry : now) {
      ClusterFile.Entry before = members.put(entry.name(), entry);
      if (before != null
          && before.pid() != entry.pid()
          && ProcessLauncher.running(entry.pid())
          && running.add(entry.pid())) {
        out.println(entry.name() + " restarted: pid " + entry.pid());
      }
    }
  }
}
