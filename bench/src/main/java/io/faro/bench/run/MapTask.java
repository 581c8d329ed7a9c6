package io.faro.bench.run;

import static java.util.Objects.requireNonNull;

import io.faro.bench.BenchSettings;
import io.faro.bench.workload.PartitionTally;
import io.faro.bench.workload.RecordGenerator;
import io.faro.bench.workload.RecordHash;
import io.faro.client.EngineShuffleId;
import io.faro.client.ShuffleClient;
import io.faro.client.push.MapPusher;
import io.faro.common.network.HostPort;
import java.util.concurrent.Callable;

/**
 * One simulated map task: generates its share of records, tallies each one (for verification),
 * writes it to its partition's buffer, cuts batches as an engine's writer would, finishes and
 * reports its end to the lifecycle manager, which commits the shuffle after the last map.
 */
final class MapTask implements Callable<MapTask.Result> {
  /** Bytes counted into the progress at a time, not per record. */
  private static final int PROGRESS_RECORDS = 4096;

  /**
   * What one map did.
   *
   * @param written what it wrote, per partition
   * @param storedBytes bytes pushed as stored on the workers (compressed, with batch headers)
   * @param cuts time of each cut (compress, checksum, queue, and any wait for a free request slot)
   * @param pushes time from sending each push request to its answer, every request of this map
   * @param finishNanos time of {@code finish()}: pushing the rest and waiting for every answer
   * @param blockedNanos time the task waited for answers, as the pusher counts it
   * @param slowDowns push answers in which a worker asked the task to slow down
   * @param revives partitions the task asked new locations for (failed pushes and splits)
   * @param backOffNanos the part of {@code blockedNanos} spent waiting for the window of a worker
   *     that asked the task to slow down
   * @param finishedAt when {@code finish()} returned ({@link System#nanoTime()})
   * @param mapperEndAt when the task reported its end ({@link System#nanoTime()})
   */
  record Result(
      PartitionTally written,
      long storedBytes,
      LatencySamples cuts,
      LatencySamples pushes,
      long finishNanos,
      long blockedNanos,
      long slowDowns,
      long revives,
      long backOffNanos,
      long finishedAt,
      long mapperEndAt) {}

  private final BenchSettings settings;
  private final ShuffleClient client;
  private final HostPort lifecycle;
  private final EngineShuffleId shuffle;
  private final int mapId;
  private final Progress progress;

  MapTask(
      BenchSettings settings,
      ShuffleClient client,
      HostPort lifecycle,
      EngineShuffleId shuffle,
      int mapId,
      Progress progress) {
    this.settings = requireNonNull(settings, "settings is null");
    this.client = requireNonNull(client, "client is null");
    this.lifecycle = requireNonNull(lifecycle, "lifecycle is null");
    this.shuffle = requireNonNull(shuffle, "shuffle is null");
    this.mapId = mapId;
    this.progress = requireNonNull(progress, "progress is null");
  }

  @Override
  public Result call() {
    int recordSize = settings.recordSize();
    PartitionTally written = new PartitionTally(settings.partitions());
    LatencySamples cuts = new LatencySamples(settings.seed() + mapId);
    // Recorded on the pool's event loops as answers arrive: guarded by its own monitor.
    LatencySamples answered = new LatencySamples(settings.seed() + settings.maps() + mapId);
    RecordGenerator generator =
        new RecordGenerator(
            settings.seed(), mapId, recordSize, settings.partitions(), settings.data());
    byte[] record = new byte[recordSize];
    long records = settings.recordsOfMap(mapId);
    long stored = 0;
    long finishNanos;
    int[] batchCounts;
    long blockedNanos;
    long slowDowns;
    long revives;
    long backOffNanos;
    long finishedAt;
    try (MapPusher pusher =
        client.newMapPusher(lifecycle, shuffle, mapId, 0, settings.maps(), settings.partitions())) {
      pusher.onPushAnswered(
          nanos -> {
            synchronized (answered) {
              answered.record(nanos);
            }
          });
      int batchSize = pusher.batchSize();
      for (long i = 1; i <= records; i++) {
        int partition = generator.next(record);
        written.add(partition, recordSize, RecordHash.of(record, 0, recordSize));
        pusher.write(partition, record, 0, recordSize);
        if (pusher.buffered(partition) >= batchSize) {
          long start = System.nanoTime();
          pusher.cut(partition);
          cuts.record(System.nanoTime() - start);
        }
        if (pusher.overBufferLimit()) {
          pusher.cutAll();
        }
        if (i % PROGRESS_RECORDS == 0) {
          progress.add((long) PROGRESS_RECORDS * recordSize);
        }
      }
      long start = System.nanoTime();
      pusher.finish();
      finishedAt = System.nanoTime();
      finishNanos = finishedAt - start;
      blockedNanos = pusher.blockedNanos();
      slowDowns = pusher.slowDowns();
      revives = pusher.revives();
      backOffNanos = pusher.backOffNanos();
      progress.add(records % PROGRESS_RECORDS * recordSize);
      for (long length : pusher.partitionLengths()) {
        stored += length;
      }
      batchCounts = pusher.batchCounts();
    }
    // finish() waited for every answer, so all are recorded; the copy is this thread's alone.
    LatencySamples pushes = new LatencySamples(settings.seed() + mapId);
    synchronized (answered) {
      pushes.addAll(answered);
    }
    long mapperEndAt = System.nanoTime();
    client.mapperEnd(lifecycle, shuffle, mapId, 0, settings.maps(), batchCounts);
    return new Result(
        written,
        stored,
        cuts,
        pushes,
        finishNanos,
        blockedNanos,
        slowDowns,
        revives,
        backOffNanos,
        finishedAt,
        mapperEndAt);
  }
}
