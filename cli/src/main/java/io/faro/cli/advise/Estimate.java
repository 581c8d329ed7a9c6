package io.faro.cli.advise;

/**
 * What moving an application's shuffles to Faro would save or cost, in task time, from what its
 * event log says the built-in shuffle did. A rough model with few parts, each taken from a
 * measurement of Faro (docs/benchmarks.md) and named here, so that a reader can argue with it:
 *
 * <ul>
 *   <li><b>Blocks.</b> The built-in reader opens, seeks and reads every non-empty block of every
 *       map output, and asks the node that holds it for it: {@link #BLOCK_MILLIS} of task time
 *       each. Faro's reader gets a partition as a few large chunks. (1,000 maps x 4,000 reducers: 4
 *       million blocks took the built-in shuffle 96 CPU-s more than Faro, 24 us each; 200 x 1,000:
 *       4 s less on 2 cores for 200,000 blocks, 40 us each.)
 *   <li><b>Fetch wait.</b> Time reducers waited for blocks: most of it is saved where blocks are
 *       small (random reads, many requests), little where they are large (the bytes still travel):
 *       {@link #waitSaved}.
 *   <li><b>Fixed costs.</b> Faro places and commits each shuffle ({@link #SHUFFLE_MILLIS}), each
 *       map task ends with a round trip to the driver ({@link #MAP_TASK_MILLIS}), each reduce task
 *       reads its partition's metadata ({@link #READ_TASK_MILLIS}), and a fresh application's first
 *       shuffles pay for starting Faro's client ({@link #APP_MILLIS}).
 * </ul>
 *
 * <p>The saving is an estimate of task time, not of the job's wall time (which depends on how many
 * tasks run at once), and it knows nothing of the disks: rank by it, then measure.
 */
final class Estimate {
  /** Task time the built-in reader spends per block it fetches (between the 24 and 40 us above). */
  static final double BLOCK_MILLIS = 0.03;

  /** A Faro shuffle's fixed cost: placement and commit (bench-shuffle-cost, p50 12-13 ms). */
  static final double SHUFFLE_MILLIS = 12;

  /** A map task's end, a round trip to the driver (0.4 ms back to back on loopback). */
  static final double MAP_TASK_MILLIS = 0.4;

  /** A reduce task's read of an empty partition (bench-shuffle-cost, p50 0.08-0.10 ms). */
  static final double READ_TASK_MILLIS = 0.1;

  /** What a fresh application's first two shuffles cost more ("A new application's first..."). */
  static final double APP_MILLIS = 600;

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
        - stage.tasks * READ_TASK_MILLIS;
  }

  /** Task time a stage's writing costs more with Faro (its shuffle's fixed costs), in ms. */
  static double costWriting(AppLog.StageShuffle stage) {
    return stage.writes() ? SHUFFLE_MILLIS + stage.tasks * MAP_TASK_MILLIS : 0;
  }

  /** The estimated saving of one stage, in ms of task time (negative: Faro costs more). */
  static double saved(AppLog.StageShuffle stage) {
    return savedReading(stage) - costWriting(stage);
  }

  /** The estimated saving of a whole application, in ms of task time. */
  static double saved(AppLog app) {
    boolean shuffles = app.stages.values().stream().anyMatch(s -> s.reads() || s.writes());
    return app.stages.values().stream().mapToDouble(Estimate::saved).sum()
        - (shuffles ? APP_MILLIS : 0);
  }
}
