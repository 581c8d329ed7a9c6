package io.faro.client;

import static java.util.Objects.requireNonNull;

import io.faro.client.ShuffleClient.PushTargets;
import io.faro.client.protocol.ExecutorProto;
import io.faro.client.protocol.ExecutorProto.PushLocations;
import io.faro.client.push.MapPusher;
import io.faro.client.push.Targets;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.netty.buffer.PooledByteBufAllocator;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The map tasks' side of an executor: where the partitions of the generation a map stage attempt
 * writes take pushes (asked once per shuffle and stage attempt, page by page for a wide one, and
 * shared by the attempt's tasks), the pushers, the revives of partitions whose push failed, and the
 * end of each map. Thread-safe.
 */
final class WriterSide {
  private record WriterKey(EngineShuffleId engineShuffle, long stage) {}

  /**
   * One map stage attempt that writes: of engine shuffle {@code shuffle}, stage attempt {@code
   * stage} ({@link ShuffleClient#stageKey}), as the lifecycle manager at {@code lifecycle} knows
   * it.
   */
  private record Writer(
      HostPort lifecycle, EngineShuffleId shuffle, long stage, int numMaps, int numPartitions) {
    WriterKey key() {
      return new WriterKey(shuffle, stage);
    }
  }

  private final ClientPool pool;
  private final ClientSettings settings;
  private final AnswerCache<WriterKey, PushTargets> pushTargets;

  WriterSide(ClientPool pool, ClientSettings settings) {
    this.pool = requireNonNull(pool, "pool is null");
    this.settings = requireNonNull(settings, "settings is null");
    this.pushTargets =
        new AnswerCache<>(settings.commitTimeout().plus(settings.network().requestTimeout()));
  }

  /** See {@link ShuffleClient#pushTargets}; {@code numPartitions} below 0: the generation only. */
  PushTargets pushTargets(
      HostPort lifecycle, EngineShuffleId shuffle, long stage, int numMaps, int numPartitions) {
    Writer writer = new Writer(lifecycle, shuffle, stage, numMaps, numPartitions);
    if (numPartitions < 0) {
      PushTargets cached =
          pushTargets.ifAsked(writer.key(), "push locations of shuffle " + shuffle);
      return cached != null ? cached : generationOnly(writer);
    }
    return pushTargets.get(
        writer.key(),
        k -> firstLocations(writer),
        "push locations of shuffle " + shuffle + " from " + lifecycle);
  }

  /**
   * A map's end on an executor that did not write it (its cache was dropped): the id of the
   * generation only, with no location.
   */
  private PushTargets generationOnly(Writer writer) {
    PushLocations r =
        Futures.await(
            askLocations(writer, 0, 0),
            settings.network().requestTimeout(),
            "the generation of shuffle " + writer.shuffle() + " from " + writer.lifecycle());
    ShuffleId faro = r.faroShuffle();
    return new PushTargets(
        faro,
        new Targets(
            faro,
            0,
            settings.pages(),
            (a, b) -> CompletableFuture.completedFuture(List.of()),
            Duration.ZERO));
  }

  /**
   * Asks for the generation the stage attempt writes and, for a shuffle of one page, every
   * location; a wider one's pages are asked for when a task first pushes to them.
   */
  private CompletableFuture<PushTargets> firstLocations(Writer writer) {
    int numPartitions = writer.numPartitions();
    int firstEnd = settings.pages().onePage(numPartitions) ? numPartitions : 0;
    return askLocations(writer, 0, firstEnd)
        .thenApply(
            r -> {
              ShuffleId faro = r.faroShuffle();
              Targets targets =
                  new Targets(
                      faro,
                      numPartitions,
                      settings.pages(),
                      (start, end) -> pageOfLocations(writer, faro, start, end),
                      // Asking may place the page: as long as a revive may take.
                      settings.network().requestTimeout().multipliedBy(3).plusSeconds(5));
              targets.known(0, firstEnd, r.locations());
              return new PushTargets(faro, targets);
            });
  }

  private CompletableFuture<PushLocations> askLocations(Writer writer, int start, int end) {
    // Asking may place partitions (slots from the masters, reserved on workers): as long as a
    // revive may take.
    return ExecutorProto.pushLocations(
        pool,
        writer.lifecycle(),
        writer.shuffle(),
        writer.stage(),
        writer.numMaps(),
        writer.numPartitions(),
        start,
        end,
        settings.network().requestTimeout().multipliedBy(3));
  }

  /** The locations of partitions [start, end) of generation {@code faro}. */
  private CompletableFuture<List<PartitionLocation>> pageOfLocations(
      Writer writer, ShuffleId faro, int start, int end) {
    return askLocations(writer, start, end)
        .thenApply(
            r -> {
              if (r.faroShuffle().shuffle() != faro.shuffle()) {
                throw new FaroException(
                    ErrorCode.INTERNAL,
                    "the lifecycle manager answered locations of Faro shuffle "
                        + r.faroShuffle().shuffle()
                        + " for a stage attempt that writes "
                        + faro);
              }
              return r.locations();
            });
  }

  /**
   * See {@link ShuffleClient#newMapPusher(HostPort, EngineShuffleId, long, MapAttempt, int, int)}.
   */
  MapPusher newMapPusher(
      HostPort lifecycle,
      EngineShuffleId shuffle,
      long stage,
      MapAttempt attempt,
      int numMaps,
      int numPartitions) {
    PushTargets targets = pushTargets(lifecycle, shuffle, stage, numMaps, numPartitions);
    return new MapPusher(
        targets.faroShuffle(),
        attempt,
        targets.locations(),
        failed -> revive(lifecycle, targets.faroShuffle(), failed),
        pool,
        settings,
        PooledByteBufAllocator.DEFAULT);
  }

  /** Asks the lifecycle manager where the failed partitions go on; blocks. */
  private List<PartitionLocation> revive(
      HostPort lifecycle, ShuffleId faroShuffle, List<MapPusher.Failed> failed) {
    // A revive asks the master for slots and reserves them: give it longer than one call.
    Duration timeout = settings.network().requestTimeout().multipliedBy(3);
    return Futures.await(
        ExecutorProto.revive(pool, lifecycle, faroShuffle, failed, timeout),
        timeout.plusSeconds(1),
        "revive of " + failed.size() + " partitions of " + faroShuffle);
  }

  /**
   * See {@link ShuffleClient#mapperEnd(HostPort, EngineShuffleId, long, MapAttempt, int, int[],
   * boolean)}.
   */
  int mapperEnd(
      HostPort lifecycle,
      EngineShuffleId shuffle,
      long stage,
      MapAttempt attempt,
      int numMaps,
      int[] batchCounts,
      boolean incomplete) {
    int mapId = attempt.mapId();
    int attemptId = attempt.attemptId();
    ShuffleId faro = pushTargets(lifecycle, shuffle, stage, numMaps, -1).faroShuffle();
    ExecutorProto.MapperEnd response =
        Futures.await(
            ExecutorProto.mapperEnd(
                pool, lifecycle, faro, attempt, numMaps, batchCounts, incomplete),
            settings.network().requestTimeout(),
            "map end of map " + mapId + " of shuffle " + faro);
    if (response.generationLost()) {
      throw new FaroException(
          ErrorCode.DATA_LOST,
          "map "
              + mapId
              + " attempt "
              + attemptId
              + " wrote Faro shuffle "
              + faro
              + ", whose data was lost meanwhile: its stage runs again into a new generation");
    }
    return response.winningAttempt();
  }

  /** Drops the push locations of engine shuffle number {@code shuffle} of any app. */
  void forget(int shuffle) {
    pushTargets.removeIf(k -> k.engineShuffle().id() == shuffle);
  }
}
