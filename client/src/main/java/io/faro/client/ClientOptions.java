package io.faro.client;

import static io.faro.common.config.ConfigOption.booleanOption;
import static io.faro.common.config.ConfigOption.durationOption;
import static io.faro.common.config.ConfigOption.enumOption;
import static io.faro.common.config.ConfigOption.intOption;
import static io.faro.common.config.ConfigOption.sizeOption;
import static io.faro.common.config.ConfigOption.stringOption;

import io.faro.common.batch.BatchEncoder;
import io.faro.common.batch.BatchFormat;
import io.faro.common.config.ConfigOption;
import java.time.Duration;
import java.util.List;

/** Settings of the client: the driver's lifecycle manager and the executors' shuffle client. */
public final class ClientOptions {
  public static final ConfigOption<Long> BATCH_SIZE =
      sizeOption(
          "faro.client.push.batch.size",
          "64k",
          1024,
          64L << 20,
          "Record bytes of one partition gathered into one batch (compressed, checksummed) "
              + "before it is pushed.");
  public static final ConfigOption<Long> BUFFER_SIZE =
      sizeOption(
          "faro.client.push.buffer.size",
          "32m",
          64 * 1024,
          1L << 30,
          "Record bytes one map task may hold across all its partitions; above it every "
              + "partition's batch is cut and pushed. Bounds map-task memory for huge partition counts.");
  public static final ConfigOption<Long> MERGE_SIZE =
      sizeOption(
          "faro.client.push.merge.size",
          "1m",
          1024,
          64L << 20,
          "Batches bound for the same worker are merged into one push frame of about this size.");
  public static final ConfigOption<Integer> MAX_IN_FLIGHT =
      intOption(
          "faro.client.push.max.in.flight",
          8,
          1,
          1024,
          "requests",
          "Push requests one map task may have unanswered at once; the task waits above it.");
  public static final ConfigOption<Boolean> COMPRESS =
      booleanOption(
          "faro.client.push.compress",
          true,
          "Compress batches before pushing, with faro.client.compression.codec (workers never "
              + "decompress); false is the same as that codec set to none.");
  public static final ConfigOption<BatchFormat.Codec> CODEC =
      enumOption(
          "faro.client.compression.codec",
          BatchFormat.Codec.LZ4,
          BatchFormat.Codec.class,
          "How map tasks compress batches: lz4 (the default), zstd (at level 1 about a third "
              + "fewer bytes than lz4 on the example Spark jobs, for 2 to 3 times its CPU per "
              + "batch: docs/benchmarks.md; worth it where the network or the workers' disks "
              + "are the limit) or none. Readers decode whatever each batch names, so a job may "
              + "change it between runs; zstd needs every worker to know it (a worker older than "
              + "this client's release refuses its batches). A batch that does not shrink is "
              + "stored as is.");
  public static final ConfigOption<Integer> ZSTD_LEVEL =
      intOption(
          "faro.client.compression.zstd.level",
          BatchEncoder.DEFAULT_ZSTD_LEVEL,
          1,
          19,
          "",
          "ZSTD's compression level with faro.client.compression.codec=zstd: higher is smaller "
              + "and slower to write (reading costs about the same).");
  public static final ConfigOption<Integer> PREFETCH_CHUNKS =
      intOption(
          "faro.client.fetch.prefetch.chunks",
          3,
          1,
          64,
          "chunks",
          "Chunks a reducer requests ahead of the one it is reading.");
  public static final ConfigOption<Duration> FETCH_TIMEOUT =
      durationOption(
          "faro.client.fetch.timeout",
          "120s",
          Duration.ofSeconds(1),
          "How long a reducer waits for one chunk.");
  public static final ConfigOption<String> LIFECYCLE_HOST =
      stringOption(
          "faro.client.lifecycle.host",
          "",
          "Host executors use to reach the driver's lifecycle manager; empty means the driver's "
              + "host name (spark.driver.host in Spark).");
  public static final ConfigOption<Integer> LIFECYCLE_PORT =
      intOption(
          "faro.client.lifecycle.port",
          0,
          0,
          65535,
          "port",
          "Port of the lifecycle manager in the driver; 0 picks a free one.");
  public static final ConfigOption<String> LIFECYCLE_BIND_HOST =
      stringOption(
          "faro.client.lifecycle.bind.host",
          "",
          "Address the driver's lifecycle manager listens on; empty means where Spark's own "
              + "driver port does (spark.driver.bindAddress when set, else the host executors "
              + "reach it at: faro.client.lifecycle.host, else spark.driver.host); 0.0.0.0 means "
              + "every interface. It answers only the application's own executors either way: "
              + "they prove a secret the driver hands them with each shuffle.");
  public static final ConfigOption<Duration> APP_HEARTBEAT_INTERVAL =
      durationOption(
          "faro.client.app.heartbeat.interval",
          "10s",
          Duration.ofMillis(100),
          "How often the driver tells the masters that the application is alive.");
  public static final ConfigOption<Duration> COMMIT_TIMEOUT =
      durationOption(
          "faro.client.commit.timeout",
          "600s",
          Duration.ofSeconds(1),
          "How long committing a shuffle's files on the workers may take, retries included; reducers "
              + "wait as long for the commit. A worker that has not committed by then loses its copies "
              + "(their partitions are lost when no other copy holds them, and the map stage runs again).");

  public static final ConfigOption<Boolean> REPLICATE =
      booleanOption(
          "faro.client.push.replicate.enabled",
          false,
          "Keep two copies of every pushed batch, on two workers (on two hosts when there are): a "
              + "batch is acknowledged once both hold it, and a reducer reads either copy. A "
              + "worker lost then costs nothing; without replication its data is written again "
              + "by a re-run of the map stage. See docs/failures.md, \"Replication\".");
  public static final ConfigOption<Boolean> PLACE_AT_REGISTER =
      booleanOption(
          "faro.client.placement.at.register",
          true,
          "Place a shuffle (slots from the masters, reserved on the workers) as soon as Spark "
              + "registers it, while its map stage is still being scheduled, so that its first "
              + "map tasks find their push locations ready instead of waiting a few milliseconds "
              + "for them. Spark registers a shuffle when it plans the stage that writes it; a "
              + "shuffle registered but never run holds its empty reservations until Spark "
              + "unregisters it or the app ends. false: place at the first map task's request.");

  /** What the driver does when Faro cannot carry a shuffle. */
  public enum FallbackPolicy {
    /** The shuffle fails at once, with the reason. */
    NEVER,
    /** The shuffle uses Spark's built-in sort shuffle, with the reason logged and posted. */
    AUTO,
    /** Every shuffle uses Spark's built-in sort shuffle: Faro is off for the application. */
    ALWAYS
  }

  public static final ConfigOption<FallbackPolicy> FALLBACK_POLICY =
      enumOption(
          "faro.client.fallback.policy",
          FallbackPolicy.AUTO,
          FallbackPolicy.class,
          "What the driver does, as Spark registers each shuffle, when Faro cannot carry it: "
              + "the masters did not answer within faro.client.fallback.connect.timeout, the "
              + "cluster could not place it (no worker with room, a quota, a limit of the "
              + "masters), or it "
              + "has more partitions than faro.client.fallback.max.partitions. auto (the "
              + "default): that shuffle uses Spark's built-in sort shuffle, and the driver logs "
              + "and posts the reason (a FaroShuffleFallback event in the event log); a job may "
              + "mix both. never: the job fails at once with the reason. always: every shuffle "
              + "uses the built-in shuffle (Faro off, for a rollback without touching "
              + "spark.shuffle.manager). With dynamic allocation and no external shuffle "
              + "service, auto and always turn Spark's shuffle tracking on (unless set), so "
              + "executors that hold a fallen-back shuffle's files stay; never leaves it off and "
              + "executors go as soon as they are idle. See docs/spark.md, \"Fallback\".");
  public static final ConfigOption<Duration> FALLBACK_CONNECT_TIMEOUT =
      durationOption(
          "faro.client.fallback.connect.timeout",
          "15s",
          Duration.ofMillis(100),
          "How long the driver waits for the masters: to register the application at its "
              + "first shuffle, and, under fallback policy auto or never, for each shuffle's "
              + "placement when Spark registers it. Past it the shuffle falls back (auto) or fails "
              + "(never). Under auto, an application that could not register tries again in the "
              + "background at most once a minute, its shuffles falling back meanwhile without "
              + "waiting; under never, each shuffle tries again.");
  public static final ConfigOption<Integer> FALLBACK_MAX_PARTITIONS =
      intOption(
          "faro.client.fallback.max.partitions",
          16_777_216,
          1,
          16_777_216,
          "partitions",
          "A shuffle with more partitions falls back (policy auto) or fails (never) when Spark "
              + "registers it, before the cluster is asked: for jobs whose widest shuffles should "
              + "stay on the built-in shuffle. The default sets no limit of its own; the masters' "
              + "faro.master.max.partitions.per.shuffle still applies when the shuffle is placed.");
  public static final ConfigOption<Integer> PARTITIONS_PER_PAGE =
      intOption(
          "faro.client.partitions.per.page",
          16_384,
          1,
          16_777_216,
          "partitions",
          "Partitions per page of a shuffle's push locations and committed files. A shuffle of "
              + "at most 4 pages is placed whole, as soon as Spark registers it; a wider one is "
              + "placed page by page, as its map tasks first push to each, so that a shuffle of a "
              + "million mostly empty partitions holds slots only where data goes. Executors ask "
              + "the driver for one page of locations or files at a time and keep the answers: "
              + "no message, and no part of the driver's memory, grows with the number of "
              + "partitions nobody writes.");
  public static final ConfigOption<Integer> REVIVE_MAX_ATTEMPTS =
      intOption(
          "faro.client.push.revive.max.attempts",
          5,
          1,
          100,
          "attempts",
          "Times one batch is pushed again to a new location (after a worker was lost, a "
              + "connection dropped, or a split refused it) before the map task fails.");
  public static final ConfigOption<Integer> FETCH_RETRIES =
      intOption(
          "faro.client.fetch.retries",
          3,
          0,
          100,
          "retries",
          "Times a reducer asks again for a chunk whose fetch failed, on each copy (the replica "
              + "too, with replication) before it declares the data lost. A copy whose worker "
              + "refuses connections is left at once for the other copy, when there is one.");
  public static final ConfigOption<Duration> FETCH_RETRY_WAIT =
      durationOption(
          "faro.client.fetch.retry.wait",
          "1s",
          Duration.ofMillis(1),
          "Wait before asking the same copy again for a chunk; doubles with each retry.");
  public static final ConfigOption<Duration> WORKER_RESTART_WAIT =
      durationOption(
          "faro.client.worker.restart.wait",
          "30s",
          Duration.ZERO,
          "How long the client waits for a worker that refuses connections (it is down, maybe "
              + "restarting) before it gives up on the data only that worker holds: a reducer "
              + "whose only remaining copy is there keeps asking for its chunk, and the "
              + "lifecycle manager keeps asking it to commit. A restarted worker serves and "
              + "commits what it had recorded, so waiting saves a stage re-run; a worker that "
              + "stays down costs this long before the map stage runs again. 0: give up once "
              + "the usual retries are spent.");

  public static final List<ConfigOption<?>> ALL =
      List.of(
          BATCH_SIZE,
          BUFFER_SIZE,
          MERGE_SIZE,
          MAX_IN_FLIGHT,
          COMPRESS,
          CODEC,
          ZSTD_LEVEL,
          PREFETCH_CHUNKS,
          FETCH_TIMEOUT,
          LIFECYCLE_HOST,
          LIFECYCLE_BIND_HOST,
          LIFECYCLE_PORT,
          APP_HEARTBEAT_INTERVAL,
          COMMIT_TIMEOUT,
          REPLICATE,
          PLACE_AT_REGISTER,
          PARTITIONS_PER_PAGE,
          FALLBACK_POLICY,
          FALLBACK_CONNECT_TIMEOUT,
          FALLBACK_MAX_PARTITIONS,
          REVIVE_MAX_ATTEMPTS,
          FETCH_RETRIES,
          FETCH_RETRY_WAIT,
          WORKER_RESTART_WAIT);

  private ClientOptions() {}
}
