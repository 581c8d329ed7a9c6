package io.faro.client;

import static java.util.Objects.requireNonNull;

import io.faro.client.fetch.PartitionReader;
import io.faro.client.fetch.ReducerFileGroups;
import io.faro.client.push.MapPusher;
import io.faro.client.push.Targets;
import io.faro.common.error.FaroException;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.ClientPool;
import io.faro.common.network.HostPort;
import java.util.ArrayList;
import java.util.List;

/**
 * The executor side of Faro, one per executor process and shared by every task and shuffle: it asks
 * the driver's lifecycle manager where to push, where to push next when a push fails, and what to
 * read (caching locations per shuffle generation and file groups per reading stage), and creates
 * the per-task {@link MapPusher}s and {@link PartitionReader}s. Uses the process's shared {@link
 * ClientPool}, which it borrows. Thread-safe.
 *
 * <p>Shuffle ids: callers name the engine's shuffle ({@link EngineShuffleId}); the lifecycle
 * manager answers with the Faro id ({@link ShuffleId}) of the generation to write or read, which is
 * what workers see (see {@link io.faro.client.driver.LifecycleManager}).
 *
 * <p>Its parts: {@link WriterSide} for map tasks (push locations per generation, revives, map ends)
 * and {@link ReaderSide} for reduce tasks (file groups per reading stage, pinned to one generation,
 * and the report of lost data). What they cache is dropped in two ways only: {@link #reportLost}
 * unpins the reading stages of the lost generation; {@link #forget} drops both sides' entries of a
 * shuffle.
 */
public final class ShuffleClient {
  /** Where the partitions of one generation take pushes; shared by this executor's tasks. */
  public record PushTargets(ShuffleId faroShuffle, Targets locations) {}

  private final ClientSettings settings;
  private final WriterSide writers;
  private final ReaderSide readers;

  public ShuffleClient(ClientPool pool, ClientSettings settings) {
    requireNonNull(pool, "pool is null");
    this.settings = requireNonNull(settings, "settings is null");
    this.writers = new WriterSide(pool, settings);
    this.readers = new ReaderSide(pool, settings);
  }

  public ClientSettings settings() {
    return settings;
  }

  /** The key of a stage attempt: stage id in the high 32 bits, attempt number in the low. */
  public static long stageKey(int stageId, int stageAttempt) {
    return ((long) stageId << 32) | (stageAttempt & 0xffffffffL);
  }

  // ------------------------------------------------------------------ map tasks

  /**
   * Where each partition of the generation that map stage attempt {@code stage} ({@link #stageKey})
   * writes takes pushes; asks the driver once per shuffle and stage attempt. A shuffle of one page
   * gets every location with that first answer; a wider one gets each page's when a task first
   * pushes to it (see {@link Targets}).
   */
  public PushTargets pushTargets(
      HostPort lifecycle, EngineShuffleId shuffle, long stage, int numMaps, int numPartitions) {
    return writers.pushTargets(lifecycle, shuffle, stage, numMaps, numPartitions);
  }

  /** The current push location of every partition (stage attempt 0); asks for every page. */
  public List<PartitionLocation> pushLocations(
      HostPort lifecycle, EngineShuffleId shuffle, int numMaps, int numPartitions) {
    Targets targets = pushTargets(lifecycle, shuffle, 0, numMaps, numPartitions).locations();
    List<PartitionLocation> result = new ArrayList<>(numPartitions);
    for (int p = 0; p < numPartitions; p++) {
      result.add(targets.get(p));
    }
    return result;
  }

  public MapPusher newMapPusher(
      HostPort lifecycle,
      EngineShuffleId shuffle,
      int mapId,
      int attemptId,
      int numMaps,
      int numPartitions) {
    return newMapPusher(
        lifecycle, shuffle, 0, new MapAttempt(mapId, attemptId), numMaps, numPartitions);
  }

  /**
   * A pusher for map attempt {@code attempt} of map stage attempt {@code stage} ({@link
   * #stageKey}).
   */
  public MapPusher newMapPusher(
      HostPort lifecycle,
      EngineShuffleId shuffle,
      long stage,
      MapAttempt attempt,
      int numMaps,
      int numPartitions) {
    return writers.newMapPusher(lifecycle, shuffle, stage, attempt, numMaps, numPartitions);
  }

  public int mapperEnd(
      HostPort lifecycle,
      EngineShuffleId shuffle,
      int mapId,
      int attemptId,
      int numMaps,
      int[] batchCounts) {
    return mapperEnd(
        lifecycle, shuffle, 0, new MapAttempt(mapId, attemptId), numMaps, batchCounts, false);
  }

  /**
   * Reports a successful map attempt of map stage attempt {@code stage} (whose pusher this executor
   * created); returns the attempt that won the map.
   *
   * @param batchCounts the batches the attempt pushed per partition ({@link
   *     MapPusher#batchCounts}): if it wins, readers check that they read exactly these
   * @throws FaroException DATA_LOST when the generation it wrote was lost meanwhile: the task must
   *     fail, not report output that no reader will read
   */
  public int mapperEnd(
      HostPort lifecycle,
      EngineShuffleId shuffle,
      long stage,
      MapAttempt attempt,
      int numMaps,
      int[] batchCounts) {
    return mapperEnd(lifecycle, shuffle, stage, attempt, numMaps, batchCounts, false);
  }

  /**
   * As {@link #mapperEnd(HostPort, EngineShuffleId, long, MapAttempt, int, int[])} for an attempt
   * whose output may be {@code incomplete} ({@link MapPusher#incomplete}): such an attempt never
   * wins.
   */
  public int mapperEnd(
      HostPort lifecycle,
      EngineShuffleId shuffle,
      long stage,
      MapAttempt attempt,
      int numMaps,
      int[] batchCounts,
      boolean incomplete) {
    return writers.mapperEnd(lifecycle, shuffle, stage, attempt, numMaps, batchCounts, incomplete);
  }

  // ------------------------------------------------------------------ reduce tasks

  /**
   * The committed files of every partition of the latest generation of {@code shuffle}; waits for
   * the commit. Asks the driver once per reading stage attempt ({@code readerStage}): a stage
   * re-run after lost data asks again and gets the new generation.
   */
  public ReducerFileGroups fileGroups(
      HostPort lifecycle, EngineShuffleId shuffle, int numMaps, long readerStage) {
    return readers.fileGroups(lifecycle, shuffle, numMaps, readerStage);
  }

  /**
   * The committed files of partitions [start, end) of {@code shuffle}, as {@link #fileGroups(
   * HostPort, EngineShuffleId, int, long)}: asked page by page, each page once per executor and
   * reading stage attempt, all of one generation.
   */
  public ReducerFileGroups fileGroups(
      HostPort lifecycle,
      EngineShuffleId shuffle,
      int numMaps,
      long readerStage,
      int start,
      int end) {
    return readers.fileGroups(lifecycle, shuffle, numMaps, readerStage, start, end);
  }

  public PartitionReader newReader(
      HostPort lifecycle,
      EngineShuffleId shuffle,
      int numMaps,
      int startPartition,
      int endPartition,
      int startMap,
      int endMap) {
    return newReader(
        lifecycle,
        shuffle,
        numMaps,
        new ReadRange(startPartition, endPartition, startMap, endMap),
        0);
  }

  /**
   * A reader of {@code range}'s partitions and maps of the generation reading stage attempt {@code
   * readerStage} reads; a reader of some maps only checks the batches the driver counts for them.
   */
  public PartitionReader newReader(
      HostPort lifecycle, EngineShuffleId shuffle, int numMaps, ReadRange range, long readerStage) {
    return readers.newReader(lifecycle, shuffle, numMaps, range, readerStage);
  }

  /**
   * Tells the driver that data of generation {@code faroShuffle} is lost; returns once the driver
   * had the engine forget the shuffle's map outputs.
   */
  public void reportLost(HostPort lifecycle, ShuffleId faroShuffle, int partition, String reason) {
    readers.reportLost(lifecycle, faroShuffle, partition, reason);
  }

  /** Drops what this executor cached about engine shuffle number {@code shuffle} of any app. */
  public void forget(int shuffle) {
    writers.forget(shuffle);
    readers.forget(shuffle);
  }
}
