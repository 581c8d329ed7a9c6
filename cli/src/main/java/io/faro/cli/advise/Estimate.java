package io.faro.cli.advise;

/**
 * What moving an application's shuffles to Faro would save or cost, in task time, from what its
 * event log says the built-in shuffle did. A model with few parts, each named here so that a reader
 * can argue with it:
 *
 * <ul>
 *   <li><b>Blocks read.</b> The built-in reader opens, seeks and reads every non-empty block of
 *       every map output: {@link #BLOCK_MILLIS} of task time each. Faro's reader gets a partition
 *       as a few large chunks.
 *   <li><b>Blocks written.</b> The built-in writer blocks on its files ("Shuffle Write Time"): a
 *       fixed part per map task, for creating and committing the data and index files, which Faro's
 *       map task pays too at its end ({@link #BUILTIN_TASK_WRITE_MILLIS}), and the rest, which
 *       grows with the blocks it writes (a compression stream per block, and with few reducers a
 *       file per block: Spark's bypass-merge writer). Faro saves {@link #WRITE_TIME_FACTOR} times
 *       that rest: the time counted is only part of what those blocks cost the task.
 *   <li><b>Bytes.</b> Faro's map task hands every byte to a push (copies, compression and network
 *       on a shared executor): {@link #PUSH_MILLIS_PER_MB}; its reader pays {@link
 *       #READ_MILLIS_PER_MB} for bytes that come over the network instead of from a local file.
 *   <li><b>Fetch wait.</b> Time reducers waited for blocks: most of it is saved where blocks are
 *       small (random reads, many requests), little where they are large (the bytes still travel):
 *       {@link #waitSaved}.
 *   <li><b>Fixed costs.</b> Faro places and commits each shuffle ({@link #SHUFFLE_MILLIS}), each
 *       map task ends with a round trip to the driver ({@link #MAP_TASK_MILLIS}), each reduce task
 *       reads its partition's metadata ({@link #READ_TASK_MILLIS}), and a fresh application's first
 *       shuffles pay for starting Faro's client ({@link #APP_MILLIS}).
 * </ul>
 *
 * <p>The fixed costs come from Faro's own fixed-cost benchmark. The per-block, per-byte and
 * write-time constants are a least-squares fit to seven job shapes run three times each on the
 * built-in shuffle and on Faro (bench/advise-check.sh, docs/benchmarks.md "Advise against
 * measurement": 10 x 10 to 400 x 2,000 blocks, 1 MB to 500 MB, Spark in local mode on a 2-core
 * machine, every shuffle file in the page cache); the fit ranks those seven as measured. Remote
 * fetch wait, which local mode does not have, is the part not fitted. The saving is an estimate of
 * task time, not of the job's wall time (which depends on how many tasks run at once), and it knows
 * nothing of the disks: rank by it, then measure.
 */
final class Estimate {
  /** Task time the built-in reader spends per block it reads (fitted: 0.024 ms). */
  static final double BLOCK_MILLIS = 0.024;

  /** The built-in writer's blocked time per map task that Faro's map task pays too (2 ms). */
  static final double BUILTIN_TASK_WRITE_MILLIS = 2;

  /** Task time Faro saves per ms of the built-in writer's blocked time beyond that (fitted). */
  static final double WRITE_TIME_FACTOR = 3.0;

  /** Task time a Faro map task spends per MiB it pushes (fitted: 6.6 ms). */
  static final double PUSH_MILLIS_PER_MB = 6.6;

  /** Task time a Faro reduce task spends more per MiB it reads (fitted: 0.08 ms). */
  static final double READ_MILLIS_PER_MB = 0.08;

  /** A Faro shuffle's fixed cost: placement and commit (bench-shuffle-cost, p50 12-13 ms). */
  static final double SHUFFLE_MILLIS = 12;

  /** A map task's end, a round trip to the driver (0.4 ms back to back on loopback). */
  static final double MAP_TASK_MILLIS = 0.4;

  /** A reduce task's read of an empty partition (bench-shuffle-cost, p50 0.08-0.10 ms). */
  static final double READ_TASK_MILLIS = 0.1;

  /** What a fresh application's first two shuffles cost more ("A new application's first..."). */
  static final double APP_MILLIS = 600;

  private static final double MB = 1024 * 1024;

  /** Blocks up to this size are small: most of the wait for them is seeks and requests. */
  static final long SMALL_BLOCK = 256 * 1024;

  /** Blocks from this size on are large: the wait for them is mostly moving their bytes. */
  static final long LARGE_BLOCK = 4 * 1024 * 1024;

  private Estimate() {}

  /** The share of a stage's fetch wait that Faro saves, by the stage's average block size. */
  static double waitSaved(long averageBlockBytes) {
    if (averageBlockBytes <= SMALL_BLOCK) {
      return 0.9;
    }
    if (averageBlockBytes >= LARGE_BLOCK) {
      return 0.1;
    }
    return 0.5;
  }

  /** Task time saved by a stage's reading with Faro (negative: lost), in ms. */
  static double savedReading(AppLog.StageShuffle stage) {
    if (!stage.reads()) {
      return 0;
    }
    return stage.blocksRead * BLOCK_MILLIS
        + stage.fetchWaitMillis * waitSaved(stage.averageBlockBytes())
        - stage.bytesRead / MB * READ_MILLIS_PER_MB
        - stage.tasks * READ_TASK_MILLIS;
  }

  /**
   * Task time saved by a stage's writing with Faro (negative: lost), in ms: the built-in writer's
   * blocked time beyond its per-task part, less Faro's pushes and fixed costs.
   */
  static double savedWriting(AppLog.StageShuffle stage) {
    if (!stage.writes()) {
      return 0;
    }
    double builtinWriteMillis =
        Math.max(0, stage.writeNanos / 1e6 - stage.tasks * BUILTIN_TASK_WRITE_MILLIS);
    return builtinWriteMillis * WRITE_TIME_FACTOR
        - stage.bytesWritten / MB * PUSH_MILLIS_PER_MB
        - SHUFFLE_MILLIS
        - stage.tasks * MAP_TASK_MILLIS;
  }

  /** The estimated saving of one stage, in ms of task time (negative: Faro costs more). */
  static double saved(AppLog.StageShuffle stage) {
    return savedReading(stage) + savedWriting(stage);
  }

  /** The estimated saving of a whole application, in ms of task time. */
  static double saved(AppLog app) {
    boolean shuffles = app.stages.values().stream().anyMatch(s -> s.reads() || s.writes());
    return app.stages.values().stream().mapToDouble(Estimate::saved).sum()
        - (shuffles ? APP_MILLIS : 0);
  }
}
