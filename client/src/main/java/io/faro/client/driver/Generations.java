package io.faro.client.driver;

import static java.util.Objects.requireNonNull;

import io.faro.client.PartitionPages;
import io.faro.client.ShuffleClient;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.ShuffleId;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.IntUnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The generations of every shuffle of the app: which one a map task writes, which one readers read
 * (the newest), and each by Faro's shuffle id. Thread-safe.
 */
final class Generations {
  private static final Logger LOG = LoggerFactory.getLogger(Generations.class);

  /**
   * Most maps or partitions of one shuffle (4,194,304): a generation holds arrays of its maps and
   * of its pages, so the bound caps what one executor request can make the driver allocate (well
   * above the masters' faro.master.max.partitions.per.shuffle default).
   */
  static final int MAX_SHAPE = 1 << 22;

  private final AppId app;
  private final PartitionPages pages;

  /** Generations of each engine shuffle, oldest first; guarded by itself. */
  private final Map<Integer, List<Generation>> byEngineShuffle = new HashMap<>();

  /** Every generation by Faro's shuffle id. */
  private final Map<Integer, Generation> byId = new ConcurrentHashMap<>();

  private final AtomicInteger nextShuffleId = new AtomicInteger();

  /** How many map outputs of an engine shuffle the engine holds; -1 when it cannot tell. */
  private volatile IntUnaryOperator engineOutputs = shuffle -> -1;

  /** Hears a generation dropped for a re-run of every map (its readers must be answered). */
  private volatile Consumer<Generation> onDropped = g -> {};

  /** Hears each generation {@link #forWriter} drops because the engine re-runs every map. */
  void onDropped(Consumer<Generation> listener) {
    this.onDropped = requireNonNull(listener, "listener is null");
  }

  /**
   * Tells how many map outputs of an engine shuffle the engine holds (-1: unknown), for a new stage
   * attempt to see whether the engine dropped them all (see {@link #forWriter}).
   */
  void engineOutputs(IntUnaryOperator available) {
    this.engineOutputs = requireNonNull(available, "available is null");
  }

  Generations(AppId app, PartitionPages pages) {
    this.app = requireNonNull(app, "app is null");
    this.pages = requireNonNull(pages, "pages is null");
  }

  /**
   * The generation a map task of stage {@code stageId} attempt {@code stageAttempt} writes. A stage
   * attempt always writes the generation it wrote first (zombie tasks of a retried stage keep
   * writing theirs, which nobody reads). A stage attempt new to this shuffle writes the latest
   * generation, unless that one is lost or already committed: then it gets a new generation (a new
   * Faro shuffle id), so that a re-run's data never mixes with the old. Stages are told apart by id
   * and attempt: a later job's new stage object re-running a skipped stage numbers its attempts
   * from 0 again.
   */
  Generation forWriter(
      int engineShuffle, int stageId, int stageAttempt, int numMaps, int numPartitions) {
    checkShape(engineShuffle, numMaps, numPartitions);
    long stageKey = ShuffleClient.stageKey(stageId, stageAttempt);
    // Asked of the engine outside the lock (Spark's tracker may be busy a moment), only when this
    // may be a new attempt over an uncommitted generation with ended maps; checked again below.
    int engineHeld =
        mayBeReRun(engineShuffle, stageKey) ? engineOutputs.applyAsInt(engineShuffle) : -1;
    Generation g;
    Generation dropped = null;
    synchronized (byEngineShuffle) {
      List<Generation> list =
          byEngineShuffle.computeIfAbsent(engineShuffle, id -> new ArrayList<>());
      g = writtenBy(list, stageKey);
      if (g == null && !list.isEmpty()) {
        Latest latest =
            latestFor(list.get(list.size() - 1), engineShuffle, stageId, stageAttempt, engineHeld);
        g = latest.writes();
        dropped = latest.dropped();
      }
      if (g == null) {
        g = newGeneration(list, engineShuffle, numMaps, numPartitions, stageId, stageAttempt);
      }
      g.addWriter(stageKey);
    }
    if (dropped != null) {
      onDropped.accept(dropped);
    }
    g.checkShape(numMaps, numPartitions);
    return g;
  }

  /** The latest generation of {@code list} that stage attempt {@code stageKey} wrote, or null. */
  private static Generation writtenBy(List<Generation> list, long stageKey) {
    for (int i = list.size() - 1; i >= 0; i--) {
      if (list.get(i).writtenBy(stageKey)) {
        return list.get(i);
      }
    }
    return null;
  }

  /**
   * What a stage attempt new to an engine shuffle makes of its latest generation: the generation it
   * writes (null: a new one), and the latest one if this call lost it.
   */
  private record Latest(Generation writes, Generation dropped) {}

  private Latest latestFor(
      Generation latest, int engineShuffle, int stageId, int stageAttempt, int engineHeld) {
    Generation dropped = null;
    if (!latest.lost() && !latest.commitStarted()) {
      if (!latest.anyMapEnded() || engineHeld != 0) {
        return new Latest(latest, null);
      }
      // Some map of the latest generation ended, yet this new stage attempt starts while the
      // engine holds no output of the shuffle: it dropped them all and runs every map again
      // (Spark rolls back a stage whose parent re-ran with another checksum, or after an
      // indeterminate one). The first attempt of a map wins in a generation, so the re-run
      // would lose to the dropped outputs: it writes a new generation instead. The old one
      // is lost, atomically with its last map's end (if that won the race, it committed,
      // and is left alone like any committed generation), and its readers are answered.
      if (latest.loseIfIncomplete()) {
        dropped = latest;
      }
      LOG.info(
          "Stage {} attempt {} re-runs every map of shuffle {}, whose output the engine dropped"
              + " before generation {} committed: it writes a new generation",
          stageId,
          stageAttempt,
          engineShuffle,
          latest.id());
    }
    if (!latest.lost()) {
      // Every map of the latest generation ended, yet a new stage attempt runs maps of it: the
      // engine dropped outputs Faro still holds (Spark rolls back the stages after an
      // indeterminate one, e.g. after a repartition, and runs them again whole). Its new
      // output must not meet the old: a new generation, never the committed one.
      LOG.info(
          "Stage {} attempt {} runs maps of shuffle {} whose generation {} is already committed: the "
              + "engine re-runs it, so it writes a new generation",
          stageId,
          stageAttempt,
          engineShuffle,
          latest.id());
    }
    return new Latest(null, dropped);
  }

  private Generation newGeneration(
      List<Generation> list,
      int engineShuffle,
      int numMaps,
      int numPartitions,
      int stageId,
      int stageAttempt) {
    if (numPartitions <= 0) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST,
          "shuffle "
              + engineShuffle
              + " of "
              + app
              + " is not written yet and the request gives no partition count");
    }
    Generation g = add(list, engineShuffle, numMaps, numPartitions);
    LOG.info(
        "Shuffle {} of {} is written as Faro shuffle {} (generation {}, stage {} attempt {})",
        engineShuffle,
        app,
        g.id(),
        list.size() - 1,
        stageId,
        stageAttempt);
    return g;
  }

  /**
   * Whether a request of stage attempt {@code stageKey} may find the latest generation of {@code
   * engineShuffle} uncommitted, with some map ended, and written by other attempts only: the one
   * case where the engine is asked how many outputs it holds.
   */
  private boolean mayBeReRun(int engineShuffle, long stageKey) {
    synchronized (byEngineShuffle) {
      List<Generation> list = byEngineShuffle.get(engineShuffle);
      if (list == null || list.isEmpty()) {
        return false;
      }
      Generation latest = list.get(list.size() - 1);
      return !latest.writtenBy(stageKey)
          && !latest.lost()
          && !latest.commitStarted()
          && latest.anyMapEnded();
    }
  }

  /** Before anything proportional to them is allocated (arrays per map and per partition). */
  private void checkShape(int engineShuffle, int numMaps, int numPartitions) {
    // A negative partition count means "as known" (a map's end names none).
    if (numMaps < 0 || numMaps > MAX_SHAPE || numPartitions > MAX_SHAPE) {
      throw new FaroException(
          ErrorCode.LIMIT_EXCEEDED,
          "shuffle "
              + engineShuffle
              + " of "
              + app
              + " asks for "
              + numMaps
              + " maps and "
              + numPartitions
              + " partitions; each must be in 0.."
              + MAX_SHAPE);
    }
  }

  /**
   * The first generation of engine shuffle {@code engineShuffle}, made now for its registration
   * (written by no stage attempt yet: the first one to ask takes it, see {@link #forWriter}); null
   * if the shuffle has a generation already.
   *
   * @throws FaroException LIMIT_EXCEEDED for a shape beyond {@link #MAX_SHAPE}
   */
  Generation forRegistration(int engineShuffle, int numMaps, int numPartitions) {
    checkShape(engineShuffle, numMaps, numPartitions);
    synchronized (byEngineShuffle) {
      List<Generation> list =
          byEngineShuffle.computeIfAbsent(engineShuffle, id -> new ArrayList<>());
      if (!list.isEmpty()) {
        return null;
      }
      Generation g = add(list, engineShuffle, numMaps, numPartitions);
      LOG.info(
          "Shuffle {} of {} is registered as Faro shuffle {} ({} maps, {} partitions)",
          engineShuffle,
          app,
          g.id(),
          numMaps,
          numPartitions);
      return g;
    }
  }

  /** A new generation of {@code engineShuffle}, the newest of its {@code list}; under its lock. */
  private Generation add(List<Generation> list, int engineShuffle, int numMaps, int numPartitions) {
    Generation g =
        new Generation(
            engineShuffle,
            new ShuffleId(app, nextShuffleId.getAndIncrement()),
            numMaps,
            numPartitions,
            pages,
            !list.isEmpty());
    list.add(g);
    byId.put(g.id().shuffle(), g);
    return g;
  }

  /**
   * The generation with Faro id {@code shuffleId}.
   *
   * @throws FaroException UNKNOWN_SHUFFLE if there is none (never written, or unregistered)
   */
  Generation get(int shuffleId) {
    Generation g = byId.get(shuffleId);
    if (g == null) {
      throw new FaroException(
          ErrorCode.UNKNOWN_SHUFFLE,
          "Faro shuffle "
              + shuffleId
              + " of "
              + app
              + " is not known to this lifecycle manager (never written, or unregistered)");
    }
    return g;
  }

  /** The newest generation of an engine shuffle, the one readers read; null if none. */
  Generation latest(int engineShuffle) {
    synchronized (byEngineShuffle) {
      List<Generation> list = byEngineShuffle.get(engineShuffle);
      return list == null || list.isEmpty() ? null : list.get(list.size() - 1);
    }
  }

  /** Every generation of every shuffle. */
  Collection<Generation> all() {
    return byId.values();
  }

  /** Forgets every generation of {@code engineShuffle}; returns them (none if it had none). */
  List<Generation> remove(int engineShuffle) {
    List<Generation> list;
    synchronized (byEngineShuffle) {
      list = byEngineShuffle.remove(engineShuffle);
    }
    if (list == null) {
      return List.of();
    }
    list.forEach(g -> byId.remove(g.id().shuffle()));
    return list;
  }

  void clear() {
    byId.clear();
    synchronized (byEngineShuffle) {
      byEngineShuffle.clear();
    }
  }
}
