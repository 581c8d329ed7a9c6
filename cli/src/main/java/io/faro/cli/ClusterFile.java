package io.faro.cli;

import io.faro.common.json.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code <work-dir>/cluster.json}: what a local cluster runs (every member's pid, ports, ids,
 * directories and log) and the Spark settings a job needs to use it. Written by the cluster, read
 * by {@code local-cluster stop}, by tools and by people.
 *
 * <p>Beside it, markers that tell the foreground launcher (another process) what the commands run
 * from other shells do: {@code cluster.json.restarting-NAME} while a process restarts member NAME
 * (it names that process, so that the marker of a restart that died counts for nothing), and {@code
 * cluster.json.stopped} once {@code local-cluster stop} stopped the cluster. A new cluster removes
 * them with the old cluster.json.
 */
final class ClusterFile {
  static final String NAME = "cluster.json";

  private static final String RESTARTING = NAME + ".restarting-";
  private static final String STOPPED = NAME + ".stopped";

  /** A member as cluster.json lists it now: a restart replaces its pid. */
  record Entry(String name, long pid, String log) {}

  /** A marker that this process restarts a member; closing it removes the marker. */
  interface Restarting extends AutoCloseable {
    @Override
    void close() throws IOException;
  }

  private ClusterFile() {}

  /**
   * Writes {@code <workDir>/cluster.json} for {@code members} (atomically: readers never see half).
   */
  static void write(
      Path workDir,
      List<LocalCluster.Member> members,
      Map<String, String> sparkSettings,
      Path adminConf)
      throws IOException {
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("workDir", workDir.toString());
    if (adminConf != null) {
      doc.put("adminConf", adminConf.toString());
    }
    List<Object> masters = new ArrayList<>();
    List<Object> workers = new ArrayList<>();
    for (LocalCluster.Member m : members) {
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
        // Every directory of its faro.worker.dirs, as started (local-cluster --worker-dirs).
        entry.put(
            "dirs", WorkerDirs.startedWith(m.command()).stream().map(Path::toString).toList());
      } else {
        entry.put("dirs", List.of(workDir.resolve(m.name()).resolve("ratis").toString()));
      }
      entry.put("log", m.log().toString());
      (m.role().equals("master") ? masters : workers).add(entry);
    }
    doc.put("masters", masters);
    doc.put("workers", workers);
    doc.put("spark", new LinkedHashMap<String, Object>(sparkSettings));
    writeAtomically(workDir.resolve(NAME), Json.write(doc));
  }

  /** The pids of every member that {@code <workDir>/cluster.json} lists, in its order. */
  static List<Long> pids(Path workDir) throws IOException {
    return Json.numbers(Files.readString(workDir.resolve(NAME)), "pid");
  }

  /** Every member {@code <workDir>/cluster.json} lists, in its order. */
  static List<Entry> entries(Path workDir) throws IOException {
    String json = Files.readString(workDir.resolve(NAME));
    List<String> names = Json.strings(json, "name");
    List<Long> pids = Json.numbers(json, "pid");
    List<String> logs = Json.strings(json, "log");
    List<Entry> entries = new ArrayList<>();
    for (int i = 0; i < names.size() && i < pids.size(); i++) {
      entries.add(new Entry(names.get(i), pids.get(i), i < logs.size() ? logs.get(i) : ""));
    }
    return entries;
  }

  /**
   * Says, until the returned marker is closed, that this process restarts member {@code name}: the
   * foreground launcher then does not take the cluster for gone while the member is down, even if
   * nothing else runs. Written before the member is stopped; to be closed only after cluster.json
   * names the new process.
   */
  static Restarting restarting(Path workDir, String name) throws IOException {
    ProcessHandle self = ProcessHandle.current();
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("member", name);
    doc.put("pid", self.pid());
    doc.put("startedAtMs", self.info().startInstant().map(Instant::toEpochMilli).orElse(-1L));
    Path file = workDir.resolve(RESTARTING + name);
    writeAtomically(file, Json.write(doc));
    return () -> Files.deleteIfExists(file);
  }

  /**
   * The members whose restart a process that still runs marks, by name (a marker whose process is
   * gone, a restart that died half-way, counts for nothing).
   */
  static List<String> restartsUnderWay(Path workDir) {
    List<String> names = new ArrayList<>();
    try (var files = Files.list(workDir)) {
      for (Path file : files.toList()) {
        String name = file.getFileName().toString();
        if (name.startsWith(RESTARTING) && !name.endsWith(".tmp") && restarterRuns(file)) {
          names.add(name.substring(RESTARTING.length()));
        }
      }
    } catch (IOException e) {
      // The directory went away: nothing restarts in it.
    }
    return names;
  }

  private static boolean restarterRuns(Path marker) {
    String doc;
    try {
      doc = Files.readString(marker);
    } catch (IOException e) {
      return false; // removed since the listing: the restart is over
    }
    long pid = Json.number(doc, "pid");
    long startedAtMs = Json.number(doc, "startedAtMs");
    // The start time tells the restarting process from a later one that got its pid.
    return ProcessHandle.of(pid)
        .filter(ProcessHandle::isAlive)
        .map(
            h ->
                startedAtMs < 0
                    || h.info()
                        .startInstant()
                        .map(t -> Math.abs(t.toEpochMilli() - startedAtMs) < 1000)
                        .orElse(true))
        .orElse(false);
  }

  /** Records that {@code local-cluster stop} stops the cluster in {@code workDir}. */
  static void markStopped(Path workDir) throws IOException {
    writeAtomically(
        workDir.resolve(STOPPED),
        Json.write(
            Map.of("pid", ProcessHandle.current().pid(), "atMs", System.currentTimeMillis())));
  }

  /** Whether {@code local-cluster stop} stopped the cluster in {@code workDir}. */
  static boolean stopped(Path workDir) {
    return Files.exists(workDir.resolve(STOPPED));
  }

  /** Replaces {@code file} with {@code text} at once: readers see the old or the new, whole. */
  static void writeAtomically(Path file, String text) throws IOException {
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.writeString(tmp, text);
    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  /** Deletes what an earlier cluster left in {@code dir}: members' directories, secrets, files. */
  static void removePreviousCluster(Path dir) throws IOException {
    try (var entries = Files.list(dir)) {
      for (Path p : entries.toList()) {
        String name = p.getFileName().toString();
        if (name.equals("master")
            || name.startsWith("master-")
            || name.startsWith("worker-")
            || name.equals("secrets")
            || name.equals(LocalCluster.ADMIN_CONF)
            || name.startsWith(NAME)) {
          deleteRecursively(p);
        }
      }
    }
  }

  private static void deleteRecursively(Path root) throws IOException {
    try (var walk = Files.walk(root)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
