package io.faro.master.raft;

import io.faro.common.tls.Tls;
import io.faro.master.MasterServerSettings;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;

/** Translates the master's config into Ratis properties; the one place Ratis is tuned. */
final class RaftSettings {
  /**
   * Snapshots kept on disk. Recovery needs only the newest (the log behind it is purged); the one
   * before stays for an operator investigating a snapshot that fails its checksum.
   */
  private static final int SNAPSHOTS_RETAINED = 2;

  private static final long PREALLOCATED_SEGMENT_BYTES = 4L << 20;

  /**
   * How long the leader waits before it tries a follower again after consecutive failures
   * ("sleep,attempts" pairs). Ratis counts every failure towards the pause, a refused connection to
   * a stopped master as much as each "your log does not match" answer of a master that just came
   * back, and its default grows the pause to 5 s after 30 of them. A master stopped for a rolling
   * upgrade collects far more than 30 while it is down, so each step of its catch-up (a few round
   * trips; many for a master whose disk was replaced) would then wait 5 s. A group of three to five
   * masters on a few hosts can afford half a second between attempts.
   */
  private static final String APPENDER_RETRY_POLICY = "1ms,10, 100ms,50, 500ms,2000000000";

  private RaftSettings() {}

  /**
   * With faro.tls.enabled, the Raft port speaks mutual TLS with the master's own certificate and
   * trusted authorities (reloaded as the files change), and takes only certificates that name a
   * master's host ({@link RaftPeerTrust}): no other process, worker or Spark driver included, can
   * take part in the group, neither as a peer nor as a client of it.
   */
  static Parameters parameters(MasterServerSettings config) {
    Parameters parameters = new Parameters();
    Tls tls = config.network().tls();
    if (tls.enabled()) {
      GrpcConfigKeys.TLS.setConf(
          parameters,
          new GrpcTlsConfig(
              tls.keyManager(),
              new RaftPeerTrust(
                  tls.trustManager(),
                  config.peers().stream().map(p -> p.raftAddress().host()).toList()),
              true));
    }
    return parameters;
  }

  static RaftProperties properties(MasterServerSettings config) {
    RaftProperties properties = new RaftProperties();
    RaftServerConfigKeys.setStorageDir(properties, List.of(config.ratisDir().toFile()));
    RaftServerConfigKeys.setRemovedGroupsDir(
        properties, config.ratisDir().resolve("removed-groups").toFile());
    RaftConfigKeys.Rpc.setType(properties, SupportedRpcType.GRPC);
    GrpcConfigKeys.Server.setHost(properties, config.bindHost());
    GrpcConfigKeys.Server.setPort(properties, config.raftPort());

    long election = config.electionTimeout().toMillis();
    RaftServerConfigKeys.Rpc.setTimeoutMin(
        properties, TimeDuration.valueOf(election, TimeUnit.MILLISECONDS));
    RaftServerConfigKeys.Rpc.setTimeoutMax(
        properties, TimeDuration.valueOf(2 * election, TimeUnit.MILLISECONDS));
    // The first election after start need not wait: no leader can exist yet to be disturbed.
    long first = Math.min(150, election);
    RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMin(
        properties, TimeDuration.valueOf(first, TimeUnit.MILLISECONDS));
    RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMax(
        properties, TimeDuration.valueOf(2 * first, TimeUnit.MILLISECONDS));

    long threshold = config.snapshotThreshold();
    RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(properties, true);
    RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(properties, threshold);
    RaftServerConfigKeys.Snapshot.setCreationGap(properties, Math.min(threshold, 1024));
    RaftServerConfigKeys.Snapshot.setRetentionFileNum(properties, SNAPSHOTS_RETAINED);
    // Recovery is always "latest snapshot, then the log after it", also after a clean stop, so
    // that one path is exercised everywhere; the threshold bounds the replay.
    RaftServerConfigKeys.Snapshot.setTriggerWhenStopEnabled(properties, false);

    RaftServerConfigKeys.Log.Appender.setRetryPolicy(properties, APPENDER_RETRY_POLICY);

    // Purge every closed segment behind each new snapshot.
    RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(properties, true);
    RaftServerConfigKeys.Log.setPurgeGap(properties, 1);
    long segment = config.raftLogSegmentSize();
    RaftServerConfigKeys.Log.setSegmentSizeMax(properties, SizeInBytes.valueOf(segment));
    RaftServerConfigKeys.Log.setPreallocatedSize(
        properties, SizeInBytes.valueOf(Math.min(segment, PREALLOCATED_SEGMENT_BYTES)));

    // Raft reads (cluster status, and the check before a leader tells a worker to delete the
    // files of an expired shuffle) confirm with a majority that this master still leads: a
    // leader cut off from the others must not answer from a state the group has moved past.
    RaftServerConfigKeys.Read.setOption(properties, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
    return properties;
  }
}
