package io.faro.master;

import static java.util.Objects.requireNonNull;

import io.faro.common.config.ConfigException;
import io.faro.common.config.FaroConf;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkSettings;
import io.faro.master.placement.LoadAwarePlacement;
import io.faro.master.raft.RaftPeerSpec;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The typed, validated settings of one master, built from {@link FaroConf} by {@link #from}.
 * Immutable. Every value is described by its key in {@link MasterServerOptions}.
 *
 * @param peers every master of the Raft group, this one included
 * @param raftPort the port this master's Raft server binds (from its entry in {@code peers})
 */
public record MasterServerSettings(
    String bindHost,
    String advertisedHost,
    int rpcPort,
    int httpPort,
    int raftPort,
    String masterId,
    List<RaftPeerSpec> peers,
    Path ratisDir,
    Duration workerTimeout,
    Duration appTimeout,
    long snapshotThreshold,
    long raftLogSegmentSize,
    Duration electionTimeout,
    Duration leaderWaitTimeout,
    int maxWorkersPerShuffle,
    MasterServerOptions.SlotsPolicy slotsPolicy,
    LoadAwarePlacement.Settings loadAware,
    long partitionSizeInitial,
    long partitionSizeMin,
    int maxPartitionsPerShuffle,
    int maxApps,
    int maxAppsPerHost,
    int maxAppsPerUser,
    String admissionFile,
    boolean featureLevelAuto,
    int initialFeatureLevel,
    NetworkSettings network) {

  public MasterServerSettings {
    requireNonNull(bindHost, "bindHost is null");
    requireNonNull(advertisedHost, "advertisedHost is null");
    requireNonNull(masterId, "masterId is null");
    peers = List.copyOf(peers);
    requireNonNull(ratisDir, "ratisDir is null");
    requireNonNull(workerTimeout, "workerTimeout is null");
    requireNonNull(appTimeout, "appTimeout is null");
    requireNonNull(leaderWaitTimeout, "leaderWaitTimeout is null");
    requireNonNull(network, "network is null");
    requireNonNull(slotsPolicy, "slotsPolicy is null");
    requireNonNull(loadAware, "loadAware is null");
    requireNonNull(admissionFile, "admissionFile is null");
  }

  /** Parses and validates every master key; a bad value throws a ConfigException naming it. */
  public static MasterServerSettings from(FaroConf conf) {
    String id = masterId(conf);
    String advertised = conf.get(MasterServerOptions.ADVERTISED_HOST);
    if (advertised.isBlank()) {
      advertised = localHostName();
    }
    List<RaftPeerSpec> peers = resolvePeers(conf, id, advertised);
    RaftPeerSpec self = peers.stream().filter(p -> p.id().equals(id)).findFirst().orElseThrow();
    return new MasterServerSettings(
        conf.get(MasterServerOptions.HOST),
        advertised,
        conf.get(MasterServerOptions.PORT),
        conf.get(MasterServerOptions.HTTP_PORT),
        self.raftAddress().port(),
        id,
        peers,
        Path.of(conf.get(MasterServerOptions.RATIS_DIR)),
        conf.get(MasterServerOptions.WORKER_TIMEOUT),
        conf.get(MasterServerOptions.APP_TIMEOUT),
        conf.get(MasterServerOptions.SNAPSHOT_THRESHOLD),
        conf.get(MasterServerOptions.RAFT_LOG_SEGMENT_SIZE),
        conf.get(MasterServerOptions.ELECTION_TIMEOUT),
        conf.get(MasterServerOptions.LEADER_WAIT_TIMEOUT),
        conf.get(MasterServerOptions.MAX_WORKERS_PER_SHUFFLE),
        conf.get(MasterServerOptions.SLOTS_POLICY),
        new LoadAwarePlacement.Settings(
            conf.get(MasterServerOptions.MAX_WORKERS_PER_SHUFFLE),
            conf.get(MasterServerOptions.SLOTS_FLUSH_WEIGHT),
            conf.get(MasterServerOptions.SLOTS_FETCH_WEIGHT),
            conf.get(MasterServerOptions.SLOTS_DISK_GROUPS),
            conf.get(MasterServerOptions.SLOTS_GROUP_GRADIENT)),
        conf.get(MasterServerOptions.SLOTS_PARTITION_SIZE_INITIAL),
        partitionSizeMin(conf),
        conf.get(MasterServerOptions.MAX_PARTITIONS_PER_SHUFFLE),
        conf.get(MasterServerOptions.MAX_APPS),
        conf.get(MasterServerOptions.MAX_APPS_PER_HOST),
        conf.get(MasterServerOptions.MAX_APPS_PER_USER),
        conf.get(MasterServerOptions.ADMISSION_FILE).trim(),
        conf.get(MasterServerOptions.FEATURE_LEVEL_AUTO),
        conf.get(MasterServerOptions.FEATURE_LEVEL_INITIAL),
        memberNetwork(conf));
  }

  /** The network settings, with the secrets they read checked as a member needs them. */
  private static NetworkSettings memberNetwork(FaroConf conf) {
    NetworkSettings network = NetworkSettings.from(conf);
    network.auth().checkedAsMember();
    return network;
  }

  /** faro.master.slots.partition.size.min, checked against the initial size. */
  private static long partitionSizeMin(FaroConf conf) {
    long min = conf.get(MasterServerOptions.SLOTS_PARTITION_SIZE_MIN);
    long initial = conf.get(MasterServerOptions.SLOTS_PARTITION_SIZE_INITIAL);
    if (initial < min) {
      throw new ConfigException(
          MasterServerOptions.SLOTS_PARTITION_SIZE_INITIAL.key()
              + " ("
              + initial
              + ") must not be below "
              + MasterServerOptions.SLOTS_PARTITION_SIZE_MIN.key()
              + " ("
              + min
              + ")");
    }
    return min;
  }

  /** This master's own entry of {@link #peers}. */
  public RaftPeerSpec self() {
    return peers.stream().filter(p -> p.id().equals(masterId)).findFirst().orElseThrow();
  }

  /** A copy whose own Raft port is {@code port}: startup replaces "0" by the port it picked. */
  public MasterServerSettings withRaftPort(int port) {
    List<RaftPeerSpec> updated =
        peers.stream()
            .map(
                p ->
                    p.id().equals(masterId)
                        ? new RaftPeerSpec(
                            p.id(), new HostPort(p.raftAddress().host(), port), p.rpcPort())
                        : p)
            .toList();
    return new MasterServerSettings(
        bindHost,
        advertisedHost,
        rpcPort,
        httpPort,
        port,
        masterId,
        updated,
        ratisDir,
        workerTimeout,
        appTimeout,
        snapshotThreshold,
        raftLogSegmentSize,
        electionTimeout,
        leaderWaitTimeout,
        maxWorkersPerShuffle,
        slotsPolicy,
        loadAware,
        partitionSizeInitial,
        partitionSizeMin,
        maxPartitionsPerShuffle,
        maxApps,
        maxAppsPerHost,
        maxAppsPerUser,
        admissionFile,
        featureLevelAuto,
        initialFeatureLevel,
        network);
  }

  /** The configured id, or the one found among the peers by this machine's addresses. */
  static String masterId(FaroConf conf) {
    String configured = conf.get(MasterServerOptions.ID).trim();
    if (!configured.isEmpty()) {
      return configured;
    }
    List<RaftPeerSpec> peers = conf.get(MasterServerOptions.RAFT_PEERS);
    if (peers.isEmpty()) {
      return "m1";
    }
    boolean portSet = conf.raw(MasterServerOptions.RAFT_PORT.key()).isPresent();
    int raftPort = conf.get(MasterServerOptions.RAFT_PORT);
    List<RaftPeerSpec> local =
        peers.stream()
            .filter(p -> isLocal(p.raftAddress().host()))
            .filter(p -> !portSet || p.raftAddress().port() == raftPort)
            .toList();
    if (local.size() == 1) {
      return local.get(0).id();
    }
    throw new ConfigException(
        MasterServerOptions.ID.key()
            + " is not set and "
            + (local.isEmpty() ? "no entry" : "several entries " + local)
            + " of "
            + MasterServerOptions.RAFT_PEERS.key()
            + " "
            + peers
            + " "
            + (local.isEmpty()
                ? "has a host that is an address of this machine"
                : "are on this machine")
            + ": set "
            + MasterServerOptions.ID.key()
            + (local.isEmpty() ? "" : " or " + MasterServerOptions.RAFT_PORT.key())
            + " on this master");
  }

  private static boolean isLocal(String host) {
    try {
      for (InetAddress address : InetAddress.getAllByName(host)) {
        if (address.isLoopbackAddress()
            || address.isAnyLocalAddress()
            || NetworkInterface.getByInetAddress(address) != null) {
          return true;
        }
      }
      return false;
    } catch (UnknownHostException | SocketException e) {
      return false;
    }
  }

  private static List<RaftPeerSpec> resolvePeers(FaroConf conf, String id, String advertised) {
    List<RaftPeerSpec> listed = conf.get(MasterServerOptions.RAFT_PEERS);
    int raftPort = conf.get(MasterServerOptions.RAFT_PORT);
    if (listed.isEmpty()) {
      // A single master is a Raft group of one: the same code path as three masters.
      return List.of(new RaftPeerSpec(id, new HostPort(advertised, raftPort), 0));
    }
    Set<String> ids = new HashSet<>();
    for (RaftPeerSpec peer : listed) {
      if (!ids.add(peer.id())) {
        throw new ConfigException(
            "Invalid value for "
                + MasterServerOptions.RAFT_PEERS.key()
                + ": master id '"
                + peer.id()
                + "' is listed twice in "
                + listed);
      }
    }
    RaftPeerSpec self =
        listed.stream()
            .filter(p -> p.id().equals(id))
            .findFirst()
            .orElseThrow(
                () ->
                    new ConfigException(
                        "Invalid value for "
                            + MasterServerOptions.RAFT_PEERS.key()
                            + ": "
                            + listed
                            + " does not list this master ("
                            + MasterServerOptions.ID.key()
                            + "="
                            + id
                            + ")"));
    boolean portSet = conf.raw(MasterServerOptions.RAFT_PORT.key()).isPresent();
    if (portSet && raftPort != self.raftAddress().port()) {
      throw new ConfigException(
          "Conflicting "
              + MasterServerOptions.RAFT_PORT.key()
              + "="
              + raftPort
              + " and "
              + MasterServerOptions.RAFT_PEERS.key()
              + " entry "
              + self
              + ": set the port in one place");
    }
    return listed;
  }

  private static String localHostName() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      // A machine whose own name does not resolve can still serve on loopback.
      return "localhost";
    }
  }
}
