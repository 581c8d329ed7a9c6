package io.faro.cli;

import io.faro.common.json.Json;
import io.faro.common.network.FreePorts;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * One master (or a Raft group of several) and N workers, each its own JVM process on loopback, started from this JVM's class
 * path: for trying Faro, for tests that kill processes, and for benchmarks. Each process writes
 * its log and a port file under the work directory; the cluster's description, with the Spark
 * settings a job needs, goes to {@code <work-dir>/cluster.json}.
 *
 * <p>Over 400 lines, knowingly: it is a process launcher, cluster.json reader/writer and topology in one; the three part in the issue "Room to grow", taken next.
 */
public final class LocalCluster implements AutoCloseable {
  public static final String CLUSTER_FILE = "cluster.json";
  private static final String MAIN_CLASS = FaroCli.class.getName();
  private static final String PROCESS_MARKER = "faro.launcher=local-cluster";
  private static final Duration START_TIMEOUT = Duration.ofSeconds(90);
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(20);

  /**
   * A launched process: where it writes its port file, its log, and what the port file said
   * once it started ({@code ports}, empty before).
   */
  public record Member(String name, String role, Process process, Path portFile, Path log, String ports,
      List<String> command) {
    public long pid() {
      return process.pid();
    }

    Member started(String reported) {
      return new Member(name, role, process, portFile, log, reported, command);
    }
  }

  private final Path workDir;
  /** Guarded by {@code this} once started ({@link #restart} replaces members). */
  private final List<Member> members;
  private final List<String> masterEndpoints;

  private final Map<String, String> clientSettings;

  private LocalCluster(Path workDir, List<Member> members, List<String> masterEndpoints,
      Map<String, String> clientSettings) {
    this.workDir = workDir;
    this.members = members;
    this.masterEndpoints = List.copyOf(masterEndpoints);
    this.clientSettings = Map.copyOf(clientSettings);
  }

  /** The faro.client.* settings of a settings file, which Spark jobs take as spark.faro.client.*. */
  private static Map<String, String> clientSettings(Path confFile) throws IOException {
    Map<String, String> client = new java.util.TreeMap<>();
    if (confFile == null) {
      return client;
    }
    java.util.Properties p = new java.util.Properties();
    try (java.io.Reader r = Files.newBufferedReader(confFile)) {
      p.load(r);
    }
    p.stringPropertyNames().stream().filter(k -> k.startsWith("faro.client."))
        .forEach(k -> client.put(k, p.getProperty(k).trim()));
    return client;
  }

  /**
   * What a Spark job needs to use this cluster: the shuffle manager, the masters, and the
   * faro.client.* settings of the cluster's settings file (replication, for example) as
   * spark.faro.client.*, so that jobs run with the settings the cluster was started with.
   */
  public Map<String, String> sparkSettings() {
    Map<String, String> spark = new LinkedHashMap<>();
    spark.put("spark.shuffle.manager", "io.faro.spark.FaroShuffleManager");
    spark.put("spark.faro.master.endpoints", masterEndpoint());
    spark.put("spark.shuffle.service.enabled", "false");
    clientSettings.forEach((k, v) -> spark.put("spark." + k, v));
    return spark;
  }

  /** Starts one master and {@code workers} workers; see {@link #start(Path, int, int, Path, int)}. */
  public static LocalCluster start(Path workDir, int workers, Path confFile, int masterPort) throws IOException {
    return start(workDir, 1, workers, confFile, masterPort);
  }

  /**
   * Starts the cluster and writes cluster.json. With several masters they form one Raft group
   * (ids m1..mN, Raft ports picked free), each in its own process and directory.
   *
   * @param masters masters of the group, at least 1
   * @param confFile a settings file every process reads first, or null
   * @param masterPort the first master's RPC port, the others on the next ports (0 picks free ones)
   */
  public static LocalCluster start(Path workDir, int masters, int workers, Path confFile, int masterPort)
      throws IOException {
    requireNonNull(workDir, "workDir is null");
    if (masters < 1) {
      throw new IllegalArgumentException("a cluster needs at least one master, not " + masters);
    }
    Path dir = Files.createDirectories(workDir.toAbsolutePath());
    if (Files.exists(dir.resolve(CLUSTER_FILE))) {
      if (anyAlive(dir)) {
        throw new IllegalStateException("a local cluster is already running in " + dir
            + "; stop it with: bin/faro local-cluster stop --work-dir " + dir);
      }
      // A new local cluster starts empty: the old master would remember workers that are gone.
      removePreviousCluster(dir);
    }
    List<Member> members = new ArrayList<>();
    try {
      List<String> endpoints = startMasters(dir, masters, confFile, masterPort, members);
      String endpoint = String.join(",", endpoints);
      for (int i = 0; i < workers; i++) {
        String name = "worker-" + i;
        Path data = Files.createDirectories(dir.resolve(name).resolve("data"));
        members.add(launch(dir, name, "worker", confFile, List.of(
            "faro.worker.host=127.0.0.1",
            "faro.worker.rpc.port=0",
            "faro.worker.push.port=0",
            "faro.worker.fetch.port=0",
            "faro.worker.dirs=" + data + ":ssd",
            "faro.master.endpoints=" + endpoint)));
      }
      for (int i = masters; i < members.size(); i++) {
        Member w = members.get(i);
        members.set(i, w.started(awaitPortFile(w)));
      }
      LocalCluster cluster = new LocalCluster(dir, members, endpoints, clientSettings(confFile));
      cluster.writeClusterFile();
      return cluster;
    } catch (IOException | RuntimeException e) {
      members.forEach(m -> stopProcess(m.process().toHandle()));
      throw e;
    }
  }

  /**
   * Launches the masters (all at once: a group elects its leader once a majority runs), waits
   * for their port files, and returns their RPC endpoints. One master keeps the name and layout
   * "master"; a group's are "master-1".."master-N" with ids m1..mN.
   */
  private static List<String> startMasters(Path dir, int count, Path confFile, int firstPort, List<Member> members)
      throws IOException {
    if (count == 1) {
      Member master = launch(dir, "master", "master", confFile, List.of(
          "faro.master.host=127.0.0.1",
          "faro.master.advertised.host=127.0.0.1",
          "faro.master.port=" + firstPort,
          "faro.master.raft.port=0",
          "faro.master.http.port=0",
          "faro.master.ratis.dir=" + dir.resolve("master").resolve("ratis")));
      members.add(master);
      master = master.started(awaitPortFile(master));
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
      members.add(launch(dir, name, "master", confFile, List.of(
          "faro.master.host=127.0.0.1",
          "faro.master.advertised.host=127.0.0.1",
          "faro.master.id=m" + (i + 1),
          "faro.master.port=" + endpoints.get(i).substring(endpoints.get(i).indexOf(':') + 1),
          "faro.master.raft.port=" + free[i],
          "faro.master.http.port=0",
          "faro.master.raft.peers=" + String.join(",", peers),
          "faro.master.endpoints=" + String.join(",", endpoints),
          "faro.master.ratis.dir=" + dir.resolve(name).resolve("ratis"))));
    }
    for (int i = 0; i < count; i++) {
      members.set(i, members.get(i).started(awaitPortFile(members.get(i))));
    }
    return endpoints;
  }

  private static void removePreviousCluster(Path dir) throws IOException {
    try (var entries = Files.list(dir)) {
      for (Path p : entries.toList()) {
        String name = p.getFileName().toString();
        if (name.equals("master") || name.startsWith("master-") || name.startsWith("worker-")
            || name.startsWith(CLUSTER_FILE)) {
          deleteRecursively(p);
        }
      }
    }
  }

  private static void deleteRecursively(Path root) throws IOException {
    try (var walk = Files.walk(root)) {
      for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  private static Member launch(Path dir, String name, String role, Path confFile, List<String> settings)
      throws IOException {
    Path home = Files.createDirectories(dir.resolve(name));
    Path portFile = home.resolve("ports.json");
    Files.deleteIfExists(portFile);
    Path log = home.resolve(role + ".log");
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    // First, so that it survives the truncation of long command lines in /proc: `stop` uses it
    // to tell our processes from others that reused a pid.
    command.add("-D" + PROCESS_MARKER);
    // A small initial heap: the JVM gives back heap it grew under a burst only down to -Xms, so
    // with the default (1/64 of the machine's memory) a process's resident memory never returns
    // to its working level after a burst of garbage.
    command.add("-Xms64m");
    command.add("-Xmx1g");
    if (role.equals("worker")) {
      // Pushed data waits in direct memory; the worker's budget is a share of this limit.
      command.add("-XX:MaxDirectMemorySize=2g");
    }
    command.add("-XX:+ExitOnOutOfMemoryError");
    for (String property : List.of("faro.home", "log4j2.configurationFile", "io.netty.leakDetection.level")) {
      String value = System.getProperty(property);
      if (value != null) {
        command.add("-D" + property + "=" + value);
      }
    }
    // No faro.log.dir: the process logs to stdout, which goes to its log file below, so every
    // line is written once (conf/log4j2.xml would otherwise write a rolling file beside it).
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(MAIN_CLASS);
    command.add(role);
    command.add("--port-file");
    command.add(portFile.toString());
    if (confFile != null) {
      command.add("--conf");
      command.add(confFile.toAbsolutePath().toString());
    }
    for (String s : settings) {
      command.add("--set");
      command.add(s);
    }
    return new Member(name, role, startProcess(command, log), portFile, log, "", List.copyOf(command));
  }

  private static Process startProcess(List<String> command, Path log) throws IOException {
    ProcessBuilder builder = new ProcessBuilder(command)
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    // As bin/faro: glibc's malloc arenas per thread (Netty, Ratis and JIT threads) otherwise keep
    // tens of MB of resident memory that no collection gives back.
    builder.environment().putIfAbsent("MALLOC_ARENA_MAX", "4");
    // A fixed mmap threshold: glibc otherwise raises it to the size of the last large block freed,
    // and the direct-buffer chunks Netty frees (4 MiB) then stay resident in its arenas.
    builder.environment().putIfAbsent("MALLOC_MMAP_THRESHOLD_", "131072");
    return builder.start();
  }

  /** Waits until the process has written its port file; returns its text. */
  private static String awaitPortFile(Member member) throws IOException {
    Path file = member.portFile();
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      if (Files.exists(file)) {
        return Files.readString(file);
      }
      if (!member.process().isAlive()) {
        throw new IllegalStateException(member.name() + " exited with code " + member.process().exitValue()
            + " during start; its log " + member.log() + " ends with:\n" + tail(member.log(), 30));
      }
      try {
        // Polls a file another process writes: there is no event to wait on.
        member.process().waitFor(100, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while starting " + member.name());
      }
    }
    throw new IllegalStateException(member.name() + " did not start within " + START_TIMEOUT.toSeconds()
        + "s; see " + member.log() + ":\n" + tail(member.log(), 30));
  }

  static String tail(Path log, int lines) {
    try {
      List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(cannot read " + log + ": " + e + ")";
    }
  }

  private void writeClusterFile() throws IOException {
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("workDir", workDir.toString());
    List<Object> masters = new ArrayList<>();
    List<Object> workers = new ArrayList<>();
    for (Member m : members) {
      Map<String, Object> entry = new LinkedHashMap<>();
      entry.put("name", m.name());
      entry.put("role", m.role());
      entry.put("pid", m.pid());
      for (String key : List.of("rpcPort", "raftPort", "httpPort", "pushPort", "fetchPort")) {
        long port = Json.number(m.ports(), key);
        if (port >= 0) {
          entry.put(key, port);
        }
      }
      String masterId = Json.string(m.ports(), "masterId");
      if (masterId != null) {
        entry.put("masterId", masterId);
      }
      String workerId = Json.string(m.ports(), "workerId");
      if (workerId != null) {
        entry.put("workerId", workerId);
      }
      if (m.role().equals("worker")) {
        entry.put("dirs", List.of(workDir.resolve(m.name()).resolve("data").toString()));
      } else {
        entry.put("dirs", List.of(workDir.resolve(m.name()).resolve("ratis").toString()));
      }
      entry.put("log", m.log().toString());
      (m.role().equals("master") ? masters : workers).add(entry);
    }
    doc.put("masters", masters);
    doc.put("workers", workers);
    doc.put("spark", new LinkedHashMap<String, Object>(sparkSettings()));
    Path tmp = workDir.resolve(CLUSTER_FILE + ".tmp");
    Files.writeString(tmp, Json.write(doc));
    Files.move(tmp, workDir.resolve(CLUSTER_FILE), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
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
   * first with SIGTERM if it still runs), waits until it is up and rewrites cluster.json.
   * Returns the new member. For rolling restarts and for restarting a killed process.
   */
  public synchronized Member restart(String name) throws IOException {
    int index = -1;
    for (int i = 0; i < members.size(); i++) {
      if (members.get(i).name().equals(name)) {
        index = i;
      }
    }
    if (index < 0) {
      throw new IllegalArgumentException("no member " + name + " in the local cluster in " + workDir);
    }
    Member old = members.get(index);
    stopProcess(old.process().toHandle());
    Files.deleteIfExists(old.portFile());
    Member fresh = new Member(old.name(), old.role(), startProcess(old.command(), old.log()), old.portFile(),
        old.log(), "", old.command());
    members.set(index, fresh);
    fresh = fresh.started(awaitPortFile(fresh));
    members.set(index, fresh);
    writeClusterFile();
    return fresh;
  }

  /**
   * Runs {@code bin/faro ARGS} (e.g. {@code admin masters --json --endpoints ...}) in a new JVM
   * with the class path the cluster's processes use; returns its exit code and output. For tests
   * that drive a cluster the way an operator does.
   */
  public static CommandResult faro(Duration timeout, String... args) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-XX:TieredStopAtLevel=1");
    command.add("-Xshare:auto");
    String log4j = System.getProperty("log4j2.configurationFile");
    if (log4j != null) {
      command.add("-Dlog4j2.configurationFile=" + log4j);
    }
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(MAIN_CLASS);
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    try {
      byte[] output = process.getInputStream().readAllBytes();
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException("faro " + String.join(" ", args) + " did not finish within " + timeout);
      }
      return new CommandResult(process.exitValue(), new String(output, StandardCharsets.UTF_8));
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running faro " + String.join(" ", args));
    }
  }

  /** What a {@link #faro} command returned. */
  public record CommandResult(int exitCode, String output) {}

  /** The member named {@code name} as it runs now. */
  public synchronized Member member(String name) {
    return members.stream().filter(m -> m.name().equals(name)).findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no member " + name + " in the local cluster in " + workDir));
  }

  /** Stops every process: SIGTERM, then SIGKILL for those still alive after a grace period. */
  @Override
  public synchronized void close() {
    for (int i = members.size() - 1; i >= 0; i--) {
      stopProcess(members.get(i).process().toHandle());
    }
  }

  /** Stops the cluster described by {@code <workDir>/cluster.json}; returns how many processes were stopped. */
  public static int stop(Path workDir) throws IOException {
    Path file = workDir.toAbsolutePath().resolve(CLUSTER_FILE);
    if (!Files.exists(file)) {
      throw new IllegalStateException("no " + CLUSTER_FILE + " in " + workDir.toAbsolutePath() + ": nothing to stop");
    }
    List<Long> pids = Json.numbers(Files.readString(file), "pid");
    int stopped = 0;
    for (int i = pids.size() - 1; i >= 0; i--) {
      Optional<ProcessHandle> handle = faroProcess(pids.get(i));
      if (handle.isPresent()) {
        stopProcess(handle.get());
        stopped++;
      }
    }
    return stopped;
  }

  private static boolean anyAlive(Path dir) throws IOException {
    return Json.numbers(Files.readString(dir.resolve(CLUSTER_FILE)), "pid").stream()
        .anyMatch(pid -> faroProcess(pid).isPresent());
  }

  /** The process {@code pid} if it is alive and is a Faro process (pids get reused). */
  private static Optional<ProcessHandle> faroProcess(long pid) {
    return ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
        .filter(h -> h.info().commandLine().map(c -> c.contains(PROCESS_MARKER)).orElse(true));
  }

  private static void stopProcess(ProcessHandle handle) {
    if (!handle.isAlive()) {
      return;
    }
    handle.destroy();
    try {
      handle.onExit().get(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      handle.destroyForcibly();
      handle.onExit().orTimeout(10, TimeUnit.SECONDS).exceptionally(t -> null).join();
    }
  }
}
