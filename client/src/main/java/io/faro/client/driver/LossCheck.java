package io.faro.client.driver;

import static java.util.Objects.requireNonNull;

import io.faro.client.ShuffleClient;
import io.faro.common.log.LogSafe;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns lost data into a re-run of the map stage: a generation that reducers found lost, or one
 * that can never commit because the engine took some map's output from an older generation, has the
 * engine forget the shuffle's map outputs (so its next stage attempt writes a new generation).
 */
final class LossCheck {
  private static final Logger LOG = LoggerFactory.getLogger(LossCheck.class);

  private final Generations generations;
  private final Committer committer;
  private volatile IntConsumer onShuffleLost = id -> {};

  LossCheck(Generations generations, Committer committer) {
    this.generations = requireNonNull(generations, "generations is null");
    this.committer = requireNonNull(committer, "committer is null");
  }

  /**
   * Hears the engine shuffle id of every generation reported lost (the engine re-runs its maps).
   */
  void onShuffleLost(IntConsumer listener) {
    this.onShuffleLost = requireNonNull(listener, "listener is null");
  }

  /**
   * A reducer found data of generation {@code g} lost on every copy: the engine forgets the map
   * outputs of the shuffle before the reducer is answered and fails its task. A report for a
   * generation that a newer one replaced is ignored (logged): the engine's outputs are the newer
   * one's. Returns the engine's error, or null.
   */
  RuntimeException reportedLost(Generation g, int partition, String reason) {
    Generation latest = generations.latest(g.engineShuffleId());
    if (latest != g) {
      // A reader of a generation a re-run already replaced (a task of an older stage attempt):
      // the engine's outputs now are the new generation's, and forgetting them would run the map
      // stage a third time. The engine ignores that task's fetch failure as stale too.
      LOG.info(
          "Ignoring a loss of partition {} reported for shuffle {} (generation of shuffle {}): "
              + "generation {} replaced it",
          partition,
          g.id(),
          g.engineShuffleId(),
          latest == null ? "none" : latest.id());
      return null;
    }
    if (!g.markLost()) {
      return null;
    }
    LOG.warn(
        "Shuffle {} (generation of shuffle {}) lost data of partition {}: {}; its map stage runs again",
        g.id(),
        g.engineShuffleId(),
        partition,
        LogSafe.text(reason));
    return forgetMapOutputs(g);
  }

  /**
   * The engine finished map stage attempt {@code stageAttempt} of stage {@code stageId} with
   * success. A task reports mapper end before its success, so every map of the generation that
   * attempt wrote has ended by now, unless the engine took some map's output from a task of an
   * older, lost generation (a zombie that finished while that generation was being lost, whose
   * output the engine registered after it forgot the others). That generation can then never
   * commit, and its readers would wait for it until faro.client.commit.timeout: it is lost at once
   * instead, the engine forgets the shuffle's map outputs, and the readers are answered with every
   * partition lost, so that the map stage runs again, whole.
   */
  void stageAttemptEnded(int stageId, int stageAttempt) {
    long stageKey = ShuffleClient.stageKey(stageId, stageAttempt);
    for (Generation g : generations.all()) {
      if (!g.writtenBy(stageKey) || !g.loseIfIncomplete()) {
        continue;
      }
      int[] winners = g.winners();
      List<Integer> missing = new ArrayList<>();
      for (int m = 0; m < winners.length; m++) {
        if (winners[m] < 0) {
          missing.add(m);
        }
      }
      LOG.warn(
          "Stage {} attempt {} ended but maps {} of shuffle {} (generation of shuffle {}) never ended in it: "
              + "the engine kept their output from a lost generation; the map stage runs again",
          stageId,
          stageAttempt,
          missing.size() > 10 ? missing.subList(0, 10) + "..." : missing,
          g.id(),
          g.engineShuffleId());
      forgetMapOutputs(g);
      committer.abandon(g);
    }
  }

  /** Has the engine forget the map outputs of {@code g}'s shuffle; returns its error, or null. */
  private RuntimeException forgetMapOutputs(Generation g) {
    try {
      onShuffleLost.accept(g.engineShuffleId());
      return null;
    } catch (RuntimeException e) {
      LOG.error(
          "The engine could not forget the map outputs of shuffle {}", g.engineShuffleId(), e);
      return e;
    }
  }
}
