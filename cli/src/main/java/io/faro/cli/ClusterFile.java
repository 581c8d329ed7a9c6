package io.faro.cli;

import io.faro.common.json.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code <work-dir>/cluster.json}: what a local cluster runs (every member's pid, ports, ids,
 * directories and log) and the Spark settings a job needs to use it. Written by the cluster, read
 * by {@code local-cluster stop}, by tools and by people.
 */
final class ClusterFile {
  static final String NAME = "cluster.json";

  private ClusterFile() {}

  /**
   * Writes {@code <workDir>/cluster.json} for {@code members} (atomically: readers never see half).
   */
  static void write(
      Path workDir, List<LocalCluster.Member> members, Map<String, String> sparkSettings)
      throws IOException {
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("workDir", workDir.toString());
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
    Path tmp = workDir.resolve(NAME + ".tmp");
    Files.writeString(tmp, Json.write(doc));
    Files.move(
        tmp,
        workDir.resolve(NAME),
        StandardCopyOption.REPLACE_EXISTING,
        StandardCopyOption.ATOMIC_MOVE);
  }

  /** The pids of every member that {@code <workDir>/cluster.json} lists, in its order. */
  static List<Long> pids(Path workDir) throws IOException {
    return Json.numbers(Files.readString(workDir.resolve(NAME)), "pid");
  }
}
