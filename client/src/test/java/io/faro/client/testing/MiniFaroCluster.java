package io.faro.client.testing;

import io.faro.common.config.FaroConf;
import io.faro.master.server.MasterServer;
import io.faro.worker.server.WorkerServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * A real Faro cluster in this JVM: one master (a Raft group of one) and N workers, each with its
 * own data directory, on loopback ephemeral ports. For tests that need real servers but not
 * separate processes. Authenticated as shipped: the members share secrets made in {@code
 * <dir>/secrets}, applications learn theirs from the master.
 */
public final class MiniFaroCluster implements AutoCloseable {
  private final MasterServer master;
  private final List<WorkerServer> workers = new ArrayList<>();
  private final List<Path> workerDirs = new ArrayList<>();

  private final FaroConf auth;

  private MiniFaroCluster(MasterServer master, FaroConf auth) {
    this.master = master;
    this.auth = auth;
  }

  /** The bearer token of the HTTP pages that list applications (an operator's). */
  public String adminToken() {
    return io.faro.common.auth.AdminTokens.http(adminCredentials().secret().orElseThrow());
  }

  /** What an operator's tool proves to this cluster's master to change its state. */
  public io.faro.common.auth.AuthOptions.Credentials adminCredentials() {
    return new io.faro.common.auth.AuthOptions.Credentials(
        io.faro.common.auth.Identity.ADMIN,
        java.util.Optional.of(
            io.faro.common.auth.Secret.read(
                Path.of(auth.raw("faro.auth.admin.secret.file").orElseThrow()),
                "faro.auth.admin.secret.file")));
  }

  /**
   * The members' secret files: what a worker a test starts by itself needs to join (add it to its
   * settings).
   */
  public FaroConf memberAuth() {
    return auth;
  }

  public static MiniFaroCluster start(Path dir, int workerCount) throws IOException {
    return start(dir, workerCount, Map.of());
  }

  /** {@code extra} settings apply to the master and every worker. */
  public static MiniFaroCluster start(Path dir, int workerCount, Map<String, String> extra)
      throws IOException {
    return start(dir, workerCount, extra, i -> Map.of());
  }

  /**
   * As {@link #start(Path, int, Map)}, with {@code perWorker.apply(i)} added to worker i's settings
   * (workers configured differently, as during a rolling change).
   */
  public static MiniFaroCluster start(
      Path dir,
      int workerCount,
      Map<String, String> extra,
      IntFunction<Map<String, String>> perWorker)
      throws IOException {
    // Authenticated as shipped: the members share secrets made here, applications learn theirs
    // from the master.
    Path secrets = Files.createDirectories(dir.resolve("secrets"));
    Path clusterSecret = secrets.resolve("cluster.secret");
    Path adminSecret = secrets.resolve("admin.secret");
    if (!Files.exists(clusterSecret)) {
      io.faro.common.auth.Secret.writeNew(clusterSecret);
      io.faro.common.auth.Secret.writeNew(adminSecret);
    }
    FaroConf auth =
        FaroConf.of(
            Map.of(
                "faro.auth.cluster.secret.file", clusterSecret.toString(),
                "faro.auth.admin.secret.file", adminSecret.toString()));
    FaroConf masterConf =
        FaroConf.of(
                Map.of(
                    "faro.master.host", "127.0.0.1",
                    "faro.master.advertised.host", "127.0.0.1",
                    "faro.master.port", "0",
                    "faro.master.raft.port", "0",
                    "faro.master.http.port", "0",
                    "faro.master.ratis.dir",
                        Files.createDirectories(dir.resolve("master")).toString()))
            .withAll(auth)
            .withAll(FaroConf.of(extra));
    MasterServer master = new MasterServer(masterConf);
    master.start();
    MiniFaroCluster cluster = new MiniFaroCluster(master, auth);
    try {
      for (int i = 0; i < workerCount; i++) {
        Path data = Files.createDirectories(dir.resolve("worker-" + i));
        FaroConf workerConf =
            FaroConf.of(
                    Map.of(
                        "faro.worker.host", "127.0.0.1",
                        "faro.worker.rpc.port", "0",
                        "faro.worker.push.port", "0",
                        "faro.worker.fetch.port", "0",
                        "faro.worker.dirs", data + ":ssd",
                        "faro.worker.heartbeat.interval", "1s",
                        // Tests must not depend on the free space of the machine they run on.
                        "faro.worker.tier.nvme.reserve", "0",
                        "faro.worker.tier.ssd.reserve", "0",
                        "faro.worker.tier.hdd.reserve", "0",
                        "faro.master.endpoints", "127.0.0.1:" + master.rpcPort()))
                .with("faro.worker.http.port", "0")
                .withAll(auth)
                .withAll(FaroConf.of(extra))
                .withAll(FaroConf.of(perWorker.apply(i)));
        WorkerServer worker = new WorkerServer(workerConf);
        cluster.workers.add(worker);
        cluster.workerDirs.add(data);
        worker.start();
      }
    } catch (RuntimeException e) {
      cluster.close();
      throw e;
    }
    return cluster;
  }

  public int masterPort() {
    return master.rpcPort();
  }

  /** The master's HTTP port ({@code /metrics}, {@code /api/v1/...}). */
  public int masterHttpPort() {
    return master.httpPort();
  }

  /** What a client needs to reach this cluster. */
  public FaroConf clientConf() {
    return FaroConf.of(
        Map.of(
            "faro.master.endpoints",
            "127.0.0.1:" + master.rpcPort(),
            "faro.client.lifecycle.host",
            "127.0.0.1"));
  }

  public List<WorkerServer> workers() {
    return workers;
  }

  public List<Path> workerDirs() {
    return workerDirs;
  }

  @Override
  public void close() {
    for (int i = workers.size() - 1; i >= 0; i--) {
      workers.get(i).close();
    }
    master.close();
  }
}
