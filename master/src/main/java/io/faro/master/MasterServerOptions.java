package io.faro.master;

import static io.faro.common.config.ConfigOption.doubleOption;
import static io.faro.common.config.ConfigOption.durationOption;
import static io.faro.common.config.ConfigOption.enumOption;
import static io.faro.common.config.ConfigOption.intOption;
import static io.faro.common.config.ConfigOption.listOption;
import static io.faro.common.config.ConfigOption.nonEmptyStringOption;
import static io.faro.common.config.ConfigOption.sizeOption;
import static io.faro.common.config.ConfigOption.stringOption;

import io.faro.common.config.ConfigOption;
import io.faro.common.version.FeatureLevel;
import io.faro.master.raft.RaftPeerSpec;
import java.time.Duration;
import java.util.List;

/**
 * Every key of the master process, with its default, unit, doc and validator. How other processes
 * reach the masters ({@code faro.master.endpoints}) lives in common's {@code MasterOptions}; this
 * class holds what only a master reads. {@link MasterServerSettings} is the typed, validated form.
 */
public final class MasterServerOptions {
  public static final ConfigOption<String> HOST =
      nonEmptyStringOption(
          "faro.master.host",
          "0.0.0.0",
          "Address the master's RPC and Raft servers bind to; 0.0.0.0 means every interface.");
  public static final ConfigOption<String> ADVERTISED_HOST =
      stringOption(
          "faro.master.advertised.host",
          "",
          "Host name other processes use to reach this master (in leader hints and in the "
              + "default Raft peer list). Empty means this machine's host name.");
  public static final ConfigOption<Integer> PORT =
      intOption(
          "faro.master.port",
          9097,
          0,
          65535,
          "port",
          "Port of the master's RPC server (workers, lifecycle managers, admin tool). "
              + "0 picks a free port, for tests.");
  public static final ConfigOption<Integer> RAFT_PORT =
      intOption(
          "faro.master.raft.port",
          9872,
          0,
          65535,
          "port",
          "Port of the Raft server that replicates the master state. 0 picks a free port, for "
              + "tests. With faro.master.raft.peers set, this master's entry there gives the port.");
  public static final ConfigOption<Integer> HTTP_PORT =
      intOption(
          "faro.master.http.port",
          9096,
          -1,
          65535,
          "port",
          "Port of the master's HTTP status page: / (text) and /status (JSON) show this master's "
              + "role, term, applied index, leader and pid, as `bin/faro admin masters` does. "
              + "0 picks a free port; -1 turns the page off.");
  public static final ConfigOption<String> ID =
      stringOption(
          "faro.master.id",
          "",
          "Id of this master in the Raft group; must never change for a given "
              + "faro.master.ratis.dir. Empty: m1 for a single master; in a group, the entry of "
              + "faro.master.raft.peers whose host is an address of this machine (and, if several "
              + "are, whose Raft port is faro.master.raft.port), so that every master can read "
              + "the same faro-defaults.conf.");
  public static final ConfigOption<List<RaftPeerSpec>> RAFT_PEERS =
      listOption(
          "faro.master.raft.peers",
          "",
          RaftPeerSpec::parse,
          true,
          "id@host:raftPort[/rpcPort]",
          "Every master of the Raft group. Empty means this master alone (a group of one, "
              + "id@advertised-host:raft-port). The optional /rpcPort is needed only when the "
              + "masters do not all use the same faro.master.port.");
  public static final ConfigOption<String> RATIS_DIR =
      nonEmptyStringOption(
          "faro.master.ratis.dir",
          "/tmp/faro/master-ratis",
          "Directory of the Raft log and snapshots. Restarting on the same directory recovers "
              + "workers, apps and shuffles. Put it on persistent storage in production: "
              + "the default under /tmp suits trying Faro out.");
  public static final ConfigOption<Duration> WORKER_TIMEOUT =
      durationOption(
          "faro.master.worker.timeout",
          "120s",
          Duration.ofMillis(100),
          "A worker without a heartbeat for this long is declared lost: it gets no new slots "
              + "until it registers again.");
  public static final ConfigOption<Duration> APP_TIMEOUT =
      durationOption(
          "faro.master.app.timeout",
          "300s",
          Duration.ofMillis(100),
          "An application without a heartbeat for this long is removed with all its shuffles; "
              + "workers then delete their files.");
  public static final ConfigOption<Integer> SNAPSHOT_THRESHOLD =
      intOption(
          "faro.master.snapshot.auto.trigger.threshold",
          10_000,
          1,
          Integer.MAX_VALUE,
          "entries",
          "Raft log entries applied between two snapshots of the master state. The log before "
              + "a snapshot is purged, so this bounds both disk use and the replay on restart.");
  public static final ConfigOption<Long> RAFT_LOG_SEGMENT_SIZE =
      sizeOption(
          "faro.master.raft.log.segment.size",
          "8m",
          16 * 1024,
          1L << 30,
          "Size of one Raft log segment file. Only whole segments behind a snapshot are purged.");
  public static final ConfigOption<Duration> ELECTION_TIMEOUT =
      durationOption(
          "faro.master.raft.election.timeout",
          "500ms",
          Duration.ofMillis(100),
          "A follower that hears nothing from the leader for a random time between this and twice "
              + "this starts an election. Lower fails over faster; too low starts needless elections "
              + "when a busy host delays the leader's heartbeats (Ratis's own default, 150ms, did "
              + "on a loaded 2-core machine).");
  public static final ConfigOption<Duration> LEADER_WAIT_TIMEOUT =
      durationOption(
          "faro.master.leader.wait.timeout",
          "30s",
          Duration.ofMillis(100),
          "How long startup waits for a Raft leader to be elected. A single master that is not "
              + "leader by then fails to start; in a group, startup goes on and answers "
              + "NOT_LEADER until an election succeeds.");
  public static final ConfigOption<Integer> MAX_WORKERS_PER_SHUFFLE =
      intOption(
          "faro.master.slots.max.workers.per.shuffle",
          500,
          1,
          1_000_000,
          "workers",
          "Most workers the partitions of one shuffle are spread over. Bounds the connections "
              + "every map task opens.");

  /** How the leader chooses a worker and a disk for each partition. */
  public enum SlotsPolicy {
    /** By tier, free space and recent disk speed (see master.placement.LoadAwarePlacement). */
    LOAD_AWARE,
    /** In turn over workers and their healthy disks, blind to tiers, space and speed. */
    ROUND_ROBIN
  }

  public static final ConfigOption<SlotsPolicy> SLOTS_POLICY =
      enumOption(
          "faro.master.slots.policy",
          SlotsPolicy.LOAD_AWARE,
          SlotsPolicy.class,
          "How partitions are placed. load_aware: the fastest disk tier with room first (nvme, "
              + "ssd, hdd); no disk gets more partitions than its usable bytes allow at the "
              + "estimated partition size; within a tier, disks are ranked by their recent write "
              + "and read time per MiB into faro.master.slots.disk.groups groups, each faster group "
              + "getting faro.master.slots.group.gradient times the partitions per disk of the "
              + "next. round_robin: in turn over workers and their healthy disks.");
  public static final ConfigOption<Double> SLOTS_FLUSH_WEIGHT =
      doubleOption(
          "faro.master.slots.flush.weight",
          "0.5",
          0,
          1000,
          "Weight of a disk's recent write time per MiB in its load score (load_aware).");
  public static final ConfigOption<Double> SLOTS_FETCH_WEIGHT =
      doubleOption(
          "faro.master.slots.fetch.weight",
          "0.5",
          0,
          1000,
          "Weight of a disk's recent read time per MiB in its load score (load_aware).");
  public static final ConfigOption<Integer> SLOTS_DISK_GROUPS =
      intOption(
          "faro.master.slots.disk.groups",
          5,
          1,
          100,
          "groups",
          "Groups the disks of one tier are sorted into by load score (load_aware); 1 ignores "
              + "load.");
  public static final ConfigOption<Double> SLOTS_GROUP_GRADIENT =
      doubleOption(
          "faro.master.slots.group.gradient",
          "1.1",
          1,
          100,
          "How many times the partitions per disk a group gets compared with the next slower "
              + "group (load_aware): 1.1 gives the fastest of 5 groups 1.46 times what the slowest "
              + "gets.");
  public static final ConfigOption<Long> SLOTS_PARTITION_SIZE_INITIAL =
      sizeOption(
          "faro.master.slots.partition.size.initial",
          "64m",
          1,
          1L << 50,
          "Partition size assumed before any worker has reported committed files (load_aware): "
              + "a disk gets at most its usable bytes divided by the estimated partition size. "
              + "Afterwards the estimate is the mean size of the partition files the workers "
              + "committed lately.");
  public static final ConfigOption<Long> SLOTS_PARTITION_SIZE_MIN =
      sizeOption(
          "faro.master.slots.partition.size.min",
          "1m",
          1,
          1L << 50,
          "Floor of the estimated partition size (load_aware): many tiny partitions must not "
              + "let one disk take every slot.");

  public static final ConfigOption<Integer> MAX_PARTITIONS_PER_SHUFFLE =
      intOption(
          "faro.master.max.partitions.per.shuffle",
          1_000_000,
          1,
          16_777_216,
          "partitions",
          "Most reducer partitions one shuffle may have. A slot request for more is refused "
              + "with LIMIT_EXCEEDED before anything is placed: a request of a few bytes must not "
              + "make the master allocate without bound. Lifecycle managers ask for the slots of "
              + "a wide shuffle a page at a time (faro.client.partitions.per.page), but every "
              + "partition placed is a location held on some worker (faro.worker.max.partitions).");
  public static final ConfigOption<Integer> MAX_APPS =
      intOption(
          "faro.master.max.apps",
          10_000,
          1,
          10_000_000,
          "apps",
          "Most applications registered at once. A registration beyond it is refused with "
              + "LIMIT_EXCEEDED (the application's job fails at its first shuffle, saying so); "
              + "apps that end or stop heartbeating make room.");
  public static final ConfigOption<Integer> MAX_APPS_PER_HOST =
      intOption(
          "faro.master.max.apps.per.host",
          1_000,
          1,
          10_000_000,
          "apps",
          "Most applications registered at once from one host (the address of the connection a "
              + "driver registered on, which the masters see, not what the driver says): one "
              + "host that registers applications in a loop cannot fill faro.master.max.apps and "
              + "shut every other one out. A registration beyond it is refused with "
              + "LIMIT_EXCEEDED, naming the host.");
  public static final ConfigOption<Integer> MAX_APPS_PER_USER =
      intOption(
          "faro.master.max.apps.per.user",
          2_000,
          1,
          10_000_000,
          "apps",
          "Most applications registered at once by one user (the user the application says runs "
              + "it, as admission rules and quotas see it; an application with no user is not "
              + "counted). A registration beyond it is refused with LIMIT_EXCEEDED.");

  public static final ConfigOption<String> ADMISSION_FILE =
      ConfigOption.stringOption(
          "faro.master.admission.file",
          "",
          "A file of admission rules (one per line: admit|deny [user=U] [queue=Q] [name=GLOB]"
              + " [percent=N]; the first rule that matches an application decides, and one that"
              + " no rule matches is admitted) and quotas (limit user=U|queue=Q [shuffles=N]"
              + " [partitions=N] [bytes=SIZE], * for each user or queue). The leader reads it every 2 seconds and, when its"
              + " rules differ from the cluster's, replicates them; a file that does not parse is"
              + " logged and the rules stay as they were. Set, the file is the one source of"
              + " rules: bin/faro admin admission set is refused. Empty: rules are set with"
              + " bin/faro admin admission set. Rules are checked when an application first"
              + " registers, never against a running one.");

  public static final ConfigOption<Boolean> FEATURE_LEVEL_AUTO =
      ConfigOption.booleanOption(
          "faro.master.feature.level.auto",
          false,
          "Whether the leader raises the cluster's feature level by itself, to the highest every"
              + " master of the group supports, once they all do (after a roll to a new release)."
              + " Off, an operator raises it with bin/faro admin feature-level set, and until then"
              + " every member can be rolled back to the release before: a level is never lowered."
              + " A new group starts at faro.master.feature.level.initial either way.");

  public static final ConfigOption<Integer> FEATURE_LEVEL_INITIAL =
      intOption(
          "faro.master.feature.level.initial",
          FeatureLevel.MAX,
          FeatureLevel.MIN,
          FeatureLevel.MAX,
          "level",
          "The cluster feature level a new group of masters starts at (read by the first leader of"
              + " a group that holds no state yet; a group that does keeps its level). The default,"
              + " the highest of this release, is what a new cluster wants; level 1 makes a cluster"
              + " that still takes the Spark client jars of the releases before feature levels"
              + " (wire protocol 1), to be raised later with bin/faro admin feature-level set.");

  public static final List<ConfigOption<?>> ALL =
      List.of(
          HOST,
          ADVERTISED_HOST,
          PORT,
          RAFT_PORT,
          HTTP_PORT,
          ID,
          RAFT_PEERS,
          RATIS_DIR,
          WORKER_TIMEOUT,
          APP_TIMEOUT,
          SNAPSHOT_THRESHOLD,
          RAFT_LOG_SEGMENT_SIZE,
          ELECTION_TIMEOUT,
          LEADER_WAIT_TIMEOUT,
          MAX_WORKERS_PER_SHUFFLE,
          SLOTS_POLICY,
          SLOTS_FLUSH_WEIGHT,
          SLOTS_FETCH_WEIGHT,
          SLOTS_DISK_GROUPS,
          SLOTS_GROUP_GRADIENT,
          SLOTS_PARTITION_SIZE_INITIAL,
          SLOTS_PARTITION_SIZE_MIN,
          MAX_PARTITIONS_PER_SHUFFLE,
          MAX_APPS,
          MAX_APPS_PER_HOST,
          MAX_APPS_PER_USER,
          ADMISSION_FILE,
          FEATURE_LEVEL_AUTO,
          FEATURE_LEVEL_INITIAL);

  private MasterServerOptions() {}
}
