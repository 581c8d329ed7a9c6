package io.faro.cli;

import static java.util.Objects.requireNonNull;

import io.faro.common.json.Json;
import io.faro.common.network.FreePorts;
import io.faro.worker.storage.DiskDir;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One master (or a Raft group of several) and N workers, each its own JVM process on loopback,
 * started from this JVM's class path: for trying Faro, for tests that kill processes, and for
 * benchmarks. Each process writes its log and a port file under the work directory; the cluster's
 * description, with the Spark settings a job needs, goes to {@code <work-dir>/cluster.json}.
 *
 * <p>This class is the topology (who runs, on which ports, with which peers); {@link
 * ProcessLauncher} starts and stops the processes, {@link ClusterFile} writes cluster.json, and
 * {@link LocalClusterConf} reads the settings file for the members' secrets and the jobs' settings.
 */
public final class LocalCluster implements AutoCloseable {
  public static final String CLUSTER_FILE = ClusterFile.NAME;

  /**
   * A launched process: where it writes its port file, its log, and what the port file said once it
   * started ({@code ports}, empty before).
   */
  public record Member(
      String name,
      String role,
      Process process,
      Path portFile,
      Path log,
      String ports,
      List<String> command) {
    public long pid() {
      return process.pid();
    }

    Member started(String reported) {
      return new Member(name, role, process, portFile, log, reported, command);
    }
  }

  private final Path workDir;

  /** Beside cluster.json: what {@code bin/faro admin --conf} needs to act on the cluster. */
  public static final String ADMIN_CONF = "admin.conf";

  private final Path adminConf;

  /** Guarded by {@code this} once started ({@link #restart} replaces members). */
  private final List<Member> members;

  private final List<String> masterEndpoints;

  private final Map<String, String> clientSettings;

  private LocalCluster(
      Path workDir,
      List<Member> members,
      List<String> masterEndpoints,
      Map<String, String> clientSettings,
      Path adminConf) {
    this.adminConf = adminConf;
    this.workDir = workDir;
    this.members = members;
    this.masterEndpoints = List.copyOf(masterEndpoints);
    this.clientSettings = Map.copyOf(clientSettings);
  }

  /**
   * The settings file that proves the operators' secret to this cluster ({@code bin/faro admin
   * --conf FILE}), when the cluster authenticates and its admin secret is known.
   */
  public Optional<Path> adminConf() {
    return Optional.ofNullable(adminConf);
  }

  /**
   * What a Spark job needs to use this cluster: the shuffle manager, the masters, and the
   * faro.client.* and faro.tls.* settings of the cluster's settings file (replication, for example,
   * or the certificate files) as spark.faro.*, so that jobs run with the settings the cluster was
   * started with.
   */
  public Map<String, String> sparkSettings() {
    Map<String, String> spark = new LinkedHashMap<>();
    spark.put("spark.shuffle.manager", "io.faro.spark.FaroShuffleManager");
    spark.put("spark.faro.master.endpoints", masterEndpoint());
    spark.put("spark.shuffle.service.enabled", "false");
    clientSettings.forEach((k, v) -> spark.put("spark." + k, v));
    return spark;
  }

  /**
   * What to start: how many masters and workers, the settings file every process reads, the first
   * master's port and the directories of each worker.
   *
   * @param masters masters of the group, at least 1; several form one Raft group (ids m1..mN, Raft
   *     ports picked free), each in its own process and directory
   * @param workers workers, each its own process
   * @param confFile a settings file every process reads first, or null
   * @param masterPort the first master's RPC port, the others on the next ports (0 picks free ones)
   * @param workerDirs the directories each worker gets under {@code <work-dir>/worker-N}
   */
  public record Options(
      int masters, int workers, Path confFile, int masterPort, WorkerDirs workerDirs) {
    public Options {
      requireNonNull(workerDirs, "workerDirs is null");
      if (masters < 1) {
        throw new IllegalArgumentException("a cluster needs at least one master, not " + masters);
      }
      if (workers < 0) {
        throw new IllegalArgumentException("negative number of workers: " + workers);
      }
    }

    /**
     * One master on a free port and {@code workers} workers, each with one ssd directory {@code
     * data}, without a settings file: what tests and tools mostly want.
     */
    public static Options workers(int workers) {
      return new Options(1, workers, null, 0, WorkerDirs.DEFAULT);
    }

    public Options withMasters(int count) {
      return new Options(count, workers, confFile, masterPort, workerDirs);
    }

    public Options withConf(Path file) {
      return new Options(masters, workers, file, masterPort, workerDirs);
    }

    public Options withMasterPort(int port) {
      return new Options(masters, workers, confFile, port, workerDirs);
    }

    public Options withWorkerDirs(WorkerDirs dirs) {
      return new Options(masters, workers, confFile, masterPort, dirs);
    }
  }

  /** Starts the cluster {@code options} describe in {@code workDir} and writes cluster.json. */
  public static LocalCluster start(Path workDir, Options options) throws IOException {
    requireNonNull(workDir, "workDir is null");
    requireNonNull(options, "options is null");
    Path confFile = options.confFile();
    Path dir = Files.createDirectories(workDir.toAbsolutePath());
    if (Files.exists(dir.resolve(CLUSTER_FILE))) {
      if (anyAlive(dir)) {
        throw new IllegalStateException(
            "a local cluster is already running in "
                + dir
                + "; stop it with: bin/faro local-cluster stop --work-dir "
                + dir);
      }
      // A new local cluster starts empty: the old master would remember workers that are gone.
      ClusterFile.removePreviousCluster(dir);
    }
    List<Member> members = new ArrayList<>();
    LocalClusterConf.Auth auth = LocalClusterConf.auth(dir, confFile);
    try {
      List<String> endpoints =
          startMasters(
              dir, options.masters(), confFile, options.masterPort(), auth.settings(), members);
      String endpoint = String.join(",", endpoints);
      for (int i = 0; i < options.workers(); i++) {
        String name = "worker-" + i;
        List<DiskDir> disks = options.workerDirs().under(dir.resolve(name));
        for (DiskDir disk : disks) {
          Files.createDirectories(disk.path());
        }
        members.add(
            ProcessLauncher.launch(
                dir,
                name,
                "worker",
                confFile,
                with(
                    auth.settings(),
                    "faro.worker.host=127.0.0.1",
                    "faro.worker.rpc.port=0",
                    "faro.worker.push.port=0",
                    "faro.worker.fetch.port=0",
                    "faro.worker.http.port=0",
                    WorkerDirs.setting(disks),
                    "faro.master.endpoints=" + endpoint)));
      }
      for (int i = options.masters(); i < members.size(); i++) {
        Member w = members.get(i);
        members.set(i, w.started(ProcessLauncher.awaitPortFile(w)));
      }
      LocalCluster cluster =
          new LocalCluster(
              dir, members, endpoints, LocalClusterConf.clientSettings(confFile), auth.adminConf());
      ClusterFile.write(dir, members, cluster.sparkSettings(), auth.adminConf());
      return cluster;
    } catch (IOException | RuntimeException e) {
      members.forEach(m -> ProcessLauncher.stop(m.process().toHandle()));
      throw e;
    }
  }

  /**
   * Launches the masters (all at once: a group elects its leader once a majority runs), waits for
   * their port files, and returns their RPC endpoints. One master keeps the name and layout
   * "master"; a group's are "master-1".."master-N" with ids m1..mN.
   */
  private static List<String> startMasters(
      Path dir, int count, Path confFile, int firstPort, List<String> auth, List<Member> members)
      throws IOException {
    if (count == 1) {
      Member master =
          ProcessLauncher.launch(
              dir,
              "master",
              "master",
              confFile,
              with(
                  auth,
                  "faro.master.host=127.0.0.1",
                  "faro.master.advertised.host=127.0.0.1",
                  "faro.master.port=" + firstPort,
                  "faro.master.raft.port=0",
                  "faro.master.http.port=0",
                  "faro.master.ratis.dir=" + dir.resolve("master").resolve("ratis")));
      members.add(master);
      master = master.started(ProcessLauncher.awaitPortFile(master));
      members.set(0, master);
      return List.of("127.0.0.1:" + Json.number(master.ports(), "rpcPort"));
    }
    // Every master must know every peer's ports before any starts: pick them now.
    int[] free = FreePorts.loopback(firstPort == 0 ? 2 * count : count);
    List<String> peers = new ArrayList<>();
    List<String> endpoints = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      int rpc = firstPort == 0 ? free[count + i] : firstPort + i;
      peers.add("m" + (i + 1) + "@127.0.0.1:" + free[i] + "/" + rpc);
      endpoints.add("127.0.0.1:" + rpc);
    }
    for (int i = 0; i < count; i++) {
      String name = "master-" + (i + 1);
      members.add(
          ProcessLauncher.launch(
              dir,
              name,
              "master",
              confFile,
              with(
                  auth,
                  "faro.master.host=127.0.0.1",
                  "faro.master.advertised.host=127.0.0.1",
                  "faro.master.id=m" + (i + 1),
                  "faro.master.port="
                      + endpoints.get(i).substring(endpoints.get(i).indexOf(':') + 1),
                  "faro.master.raft.port=" + free[i],
                  "faro.master.http.port=0",
                  "faro.master.raft.peers=" + String.join(",", peers),
                  "faro.master.endpoints=" + String.join(",", endpoints),
                  "faro.master.ratis.dir=" + dir.resolve(name).resolve("ratis"))));
    }
    for (int i = 0; i < count; i++) {
      members.set(i, members.get(i).started(ProcessLauncher.awaitPortFile(members.get(i))));
    }
    return endpoints;
  }

  /** {@code first} followed by {@code more}. */
  private static List<String> with(List<String> first, String... more) {
    List<String> all = new ArrayList<>(first);
    all.addAll(List.of(more));
    return all;
  }

  public Path workDir() {
    return workDir;
  }

  public synchronized List<Member> members() {
    return List.copyOf(members);
  }

  /** {@code host:port,...} of every master, for {@code faro.master.endpoints}. */
  public String masterEndpoint() {
    return String.join(",", masterEndpoints);
  }

  /** {@code host:port} of every master, in order (master-1 first). */
  public List<String> masterEndpoints() {
    return masterEndpoints;
  }

  /**
   * Starts member {@code name} again with the same command line, storage and ports (stopping it
   * first with SIGTERM if it still runs), waits until it is up and rewrites cluster.json. A worker
   * keeps its id and ports, so it serves again what it committed. Returns the new member. For
   * rolling restarts and for restarting a killed process. Marked beside cluster.json while under
   * way, as {@code local-cluster restart} is ({@link ClusterFile#restarting}).
   */
  public synchronized Member restart(String name) throws IOException {
    int index = -1;
    for (int i = 0; i < members.size(); i++) {
      if (members.get(i).name().equals(name)) {
        index = i;
      }
    }
    if (index < 0) {
      throw new IllegalArgumentException(
          "no member " + name + " in the local cluster in " + workDir);
    }
    Member old = members.get(index);
    try (ClusterFile.Restarting marker = ClusterFile.restarting(workDir, name)) {
      ProcessLauncher.stop(old.process().toHandle());
      Files.deleteIfExists(old.portFile());
      // The same identity: ports it was given as 0 (free ones) are now the ones it got, so that
      // clients, cluster.json and a worker's id (host:rpc port) still name it.
      List<String> command = ProcessLauncher.onSamePorts(old.command(), old.role(), old.ports());
      Member fresh =
          new Member(
              old.name(),
              old.role(),
              ProcessLauncher.start(command, old.log()),
              old.portFile(),
              old.log(),
              "",
              command);
      members.set(index, fresh);
      fresh = fresh.started(ProcessLauncher.awaitPortFile(fresh));
      members.set(index, fresh);
      ClusterFile.write(workDir, members, sparkSettings(), adminConf);
      return fresh;
    }
  }

  /** The member named {@code name} as it runs now. */
  public synchronized Member member(String name) {
    return members.stream()
        .filter(m -> m.name().equals(name))
        .findFirst()
        .orElseThrow(
            () ->
                new IllegalArgumentException(
                    "no member " + name + " in the local cluster in " + workDir));
  }

  /** Stops every process: SIGTERM, then SIGKILL for those still alive after a grace period. */
  @Override
  public synchronized void close() {
    for (int i = members.size() - 1; i >= 0; i--) {
      ProcessLauncher.stop(members.get(i).process().toHandle());
    }
  }

  /**
   * Stops the cluster described by {@code <workDir>/cluster.json}; returns how many processes were
   * stopped. Says so beside cluster.json first, so that a launcher running the cluster in the
   * foreground exits 0 once they are gone ({@link ClusterFile#markStopped}).
   */
  public static int stop(Path workDir) throws IOException {
    Path file = workDir.toAbsolutePath().resolve(CLUSTER_FILE);
    if (!Files.exists(file)) {
      throw new IllegalStateException(
          "no " + CLUSTER_FILE + " in " + workDir.toAbsolutePath() + ": nothing to stop");
    }
    try {
      ClusterFile.markStopped(workDir.toAbsolutePath());
    } catch (IOException e) {
      // Stopped all the same; a launcher in the foreground then exits 1 instead of 0.
    }
    List<Long> pids = ClusterFile.pids(workDir.toAbsolutePath());
    int stopped = 0;
    for (int i = pids.size() - 1; i >= 0; i--) {
      Optional<ProcessHandle> handle = ProcessLauncher.faroProcess(pids.get(i));
      if (handle.isPresent()) {
        ProcessLauncher.stop(handle.get());
        stopped++;
      }
    }
    return stopped;
  }

  private static boolean anyAlive(Path dir) throws IOException {
    // Not a zombie: a member that exited and that init has not reaped yet (its launcher detached)
    // holds no port and no file, and a start right after a stop must not take it for running.
    return ClusterFile.pids(dir).stream().anyMatch(ProcessLauncher::running);
  }
}
