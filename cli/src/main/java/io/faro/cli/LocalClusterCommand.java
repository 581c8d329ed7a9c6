package io.faro.cli;

import io.faro.common.config.ConfigOption;
import io.faro.common.config.FaroConf;
import io.faro.worker.WorkerOptions;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code faro local-cluster}: a master and N workers as separate processes on loopback. */
@Command(
    name = "local-cluster",
    mixinStandardHelpOptions = true,
    description = {
      "Starts one master and N workers, each its own process on 127.0.0.1, and writes",
      "<work-dir>/cluster.json (role, pid, ports, data dirs of each process, and the",
      "spark.* settings a job needs). Stops them on Ctrl-C, or with",
      "`local-cluster stop` from another shell: the command then exits 0 once they are",
      "gone (1 if they all exited otherwise), but waits while `local-cluster restart`",
      "restarts one.",
      "A new cluster starts empty: what a stopped one left in <work-dir> is removed first.",
      "Each worker has one ssd directory, <work-dir>/worker-N/data; --worker-dirs gives",
      "it several of other tiers, e.g. --worker-dirs nvme:150m,hdd."
    },
    subcommands = {
      LocalClusterStopCommand.class,
      LocalClusterRestartCommand.class,
      LocalClusterUpgradeCommand.class
    })
final class LocalClusterCommand implements Callable<Integer> {
  @Option(
      names = "--workers",
      defaultValue = "2",
      description = "Number of workers (default: ${DEFAULT-VALUE}).")
  int workers;

  @Option(
      names = "--masters",
      defaultValue = "1",
      description =
          "Number of masters (default: ${DEFAULT-VALUE}); 3 or 5 run a Raft group, one process each.")
  int masters;

  // Not `required`: picocli would then demand it before the `stop` subcommand too.
  @Option(
      names = "--work-dir",
      description = "Directory for logs, data and cluster.json (required).")
  Path workDir;

  @Option(
      names = "--conf",
      description = "Settings file every process reads (e.g. conf/faro-defaults.conf).")
  Path conf;

  @Option(
      names = "--master-port",
      defaultValue = "9097",
      description =
          "RPC port of the (first) master, the others on the next ports "
              + "(default: ${DEFAULT-VALUE}; 0 picks free ones).")
  int masterPort;

  @Option(
      names = WorkerDirs.OPTION,
      paramLabel = "SPEC",
      description =
          "Directories of each worker: a comma-separated list of tier[:capacity][@DIR], tier one "
              + "of nvme, ssd, hdd and capacity a size like 150m (the most Faro keeps there), e.g. "
              + "nvme:150m,hdd. Each becomes <work-dir>/worker-N/<tier> (a second of one tier "
              + "<tier>-2) in the worker's faro.worker.dirs, or DIR/worker-N/<tier> with @DIR (an "
              + "absolute directory on another file system, e.g. a disk to measure; it is not "
              + "emptied at start). Without @DIR they all share the work directory's file "
              + "system: a capacity is what makes one fill first. A capacity below the tier's "
              + "reserve (faro.worker.tier.<tier>.reserve, 1g unless --conf lowers it) makes the "
              + "disk full from the start. Default: one ssd directory, worker-N/data.")
  String workerDirs;

  @Option(
      names = "--detach",
      description = "Start, write cluster.json and exit, leaving the processes running.")
  boolean detach;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    PrintWriter err = spec.commandLine().getErr();
    String wrong = wrongOption();
    WorkerDirs dirs = WorkerDirs.DEFAULT;
    if (wrong == null && workerDirs != null) {
      try {
        dirs = WorkerDirs.parse(workerDirs);
      } catch (IllegalArgumentException e) {
        wrong = e.getMessage();
      }
    }
    if (wrong != null) {
      err.println("faro local-cluster: " + wrong);
      err.flush();
      return 2;
    }
    if (workerDirs != null) {
      warnOfDisksFullFromTheStart(dirs, err);
    }
    LocalCluster cluster =
        LocalCluster.start(
            workDir, new LocalCluster.Options(masters, workers, conf, masterPort, dirs));
    printStarted(cluster, dirs);
    if (detach) {
      System.out.println("Stop with: bin/faro local-cluster stop --work-dir " + cluster.workDir());
      return 0;
    }
    return runInForeground(cluster);
  }

  /** What is wrong with the options given, or null. */
  private String wrongOption() {
    if (workDir == null) {
      return "--work-dir is required";
    }
    String badWorkDir = whyNotAWorkDir(workDir);
    if (badWorkDir != null) {
      return badWorkDir;
    }
    if (conf != null && !Files.isRegularFile(conf)) {
      return "--conf "
          + conf
          + (Files.exists(conf) ? " is not a regular file" : " does not exist")
          + ": give a settings file (key value per line), e.g. --conf conf/faro-defaults.conf";
    }
    if (workers < 1) {
      return "--workers must be at least 1";
    }
    if (masters < 1) {
      return "--masters must be at least 1 (3 or 5 for a Raft group that survives losing a master)";
    }
    return null;
  }

  /** Tells where the members are, their logs, the cluster file and the Spark settings. */
  private void printStarted(LocalCluster cluster, WorkerDirs dirs) {
    Path file = cluster.workDir().resolve(LocalCluster.CLUSTER_FILE);
    System.out.println(
        "Faro local cluster: "
            + masters
            + (masters == 1 ? " master" : " masters")
            + " and "
            + workers
            + " workers, "
            + (masters == 1 ? "master at " : "masters at ")
            + cluster.masterEndpoint());
    cluster
        .members()
        .forEach(m -> System.out.println("  " + m.name() + " pid " + m.pid() + ", log " + m.log()));
    if (workerDirs != null) {
      System.out.println("Each worker's directories: " + describe(dirs));
    }
    System.out.println("Cluster description: " + file);
    cluster
        .adminConf()
        .ifPresent(
            admin ->
                System.out.println(
                    "Authentication on, with secrets made in "
                        + cluster.workDir().resolve("secrets")
                        + "; operators' calls: bin/faro admin ... --conf "
                        + admin));
    System.out.println("Spark settings:");
    cluster.sparkSettings().forEach((k, v) -> System.out.println("  --conf " + k + "=" + v));
  }

  /**
   * Runs until Ctrl-C (0, the shutdown hook stops the cluster), a local-cluster stop (0), or every
   * member exiting by itself (1), telling of each member that exits meanwhile.
   */
  private static int runInForeground(LocalCluster cluster) throws InterruptedException {
    Path dir = cluster.workDir();
    // Set by whichever ends the cluster first: a Ctrl-C (the shutdown hook) or the cluster itself.
    AtomicBoolean ended = new AtomicBoolean();
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  if (!ended.compareAndSet(false, true)) {
                    return; // every member is gone already
                  }
                  System.out.println("Stopping the local cluster...");
                  stopEveryMember(cluster);
                },
                "faro-local-cluster-stop"));
    System.out.println(
        "Running; press Ctrl-C to stop, or run: bin/faro local-cluster stop --work-dir " + dir);
    for (LocalCluster.Member m : cluster.members()) {
      m.process().onExit().thenAccept(p -> tellExit(m, p, dir, ended));
    }
    ForegroundWatch.Ended end =
        new ForegroundWatch(dir, cluster.members(), System.out, System.err).await(ended::get);
    if (end == null || !ended.compareAndSet(false, true)) {
      return 0; // Ctrl-C: the shutdown hook stops the cluster, and the JVM exits once it is done
    }
    if (end.stopped()) {
      System.out.println(
          "Every member of the local cluster in "
              + dir
              + " has stopped (local-cluster stop); exiting.");
      return 0;
    }
    System.err.println(
        "Every member of the local cluster in "
            + dir
            + " has exited, without local-cluster stop; exiting with code 1 (see their logs).");
    return 1;
  }

  private static void tellExit(LocalCluster.Member m, Process p, Path dir, AtomicBoolean ended) {
    if (!ended.get()) {
      System.err.println(
          m.name()
              + " (pid "
              + p.pid()
              + ") exited with code "
              + p.exitValue()
              + (ClusterFile.restartsUnderWay(dir).contains(m.name()) ? " to be restarted" : "")
              + "; see "
              + m.log());
    }
  }

  /**
   * On Ctrl-C: stops every member, those cluster.json lists now (a member restarted by {@code
   * local-cluster restart} is not this JVM's child) and then what this JVM started.
   */
  private static void stopEveryMember(LocalCluster cluster) {
    try {
      LocalCluster.stop(cluster.workDir());
    } catch (IOException | RuntimeException e) {
      System.err.println("Cannot read " + LocalCluster.CLUSTER_FILE + " (" + e + ")");
    }
    cluster.close();
  }

  /** {@code nvme (150m), hdd}: the directories of {@code dirs}, for the operator. */
  private static String describe(WorkerDirs dirs) {
    return String.join(
        ", ",
        dirs.items().stream()
            .map(
                i ->
                    i.name()
                        + (i.capacityBytes() == Long.MAX_VALUE
                            ? ""
                            : " (" + ConfigOption.formatSize(i.capacityBytes()) + ")"))
            .toList());
  }

  /**
   * Says so when a capacity of {@code dirs} is below its tier's reserve in the settings file: the
   * worker then reports that disk full at once, which surprises whoever wanted a small disk that
   * fills up during a job.
   */
  private void warnOfDisksFullFromTheStart(WorkerDirs dirs, PrintWriter err) {
    FaroConf settings;
    try {
      settings = conf == null ? FaroConf.empty() : FaroConf.load(conf);
    } catch (RuntimeException e) {
      return; // the processes name what is wrong with the file
    }
    for (WorkerDirs.Item item : dirs.items()) {
      ConfigOption<Long> reserve = WorkerOptions.TIER_RESERVE.get(item.tier());
      long bytes;
      try {
        bytes = settings.get(reserve);
      } catch (RuntimeException e) {
        return;
      }
      if (item.capacityBytes() < bytes) {
        err.println(
            "faro local-cluster: note: "
                + item.name()
                + " has a capacity of "
                + ConfigOption.formatSize(item.capacityBytes())
                + ", below "
                + reserve.key()
                + " ("
                + ConfigOption.formatSize(bytes)
                + "): the workers report it full from the start; lower the reserve in --conf "
                + "for a disk that fills up as data comes");
        err.flush();
      }
    }
  }

  /**
   * Whether {@code workDir} cannot hold a cluster, after telling why on the error stream of {@code
   * spec}'s command line as {@code faro local-cluster SUBCOMMAND: ...}.
   */
  static boolean refusedWorkDir(CommandSpec spec, String subcommand, Path workDir) {
    String bad = whyNotAWorkDir(workDir);
    if (bad == null) {
      return false;
    }
    spec.commandLine().getErr().println("faro local-cluster " + subcommand + ": " + bad);
    spec.commandLine().getErr().flush();
    return true;
  }

  /**
   * Why {@code workDir} cannot hold a cluster (it, or the first part of it that exists, is a file;
   * or it cannot be created there), as a message that says what to give instead; null when it is a
   * directory or can be created.
   */
  static String whyNotAWorkDir(Path workDir) {
    Path dir = workDir.toAbsolutePath();
    Path existing = dir;
    while (existing != null && !Files.exists(existing)) {
      existing = existing.getParent();
    }
    String fix =
        ": give a directory for the cluster's logs, data and cluster.json (it is created if "
            + "missing), e.g. --work-dir /tmp/faro-local";
    if (existing != null && !Files.isDirectory(existing)) {
      return "--work-dir "
          + workDir
          + (existing.equals(dir)
              ? " is a file, not a directory"
              : " cannot be created: " + existing + " is a file, not a directory")
          + fix;
    }
    if (existing != null && !existing.equals(dir) && !Files.isWritable(existing)) {
      return "--work-dir "
          + workDir
          + " cannot be created: "
          + existing
          + " is not writable by this user"
          + fix;
    }
    return null;
  }
}
