package io.faro.client;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.AppId;
import io.faro.common.id.ShuffleId;

/**
 * The engine's shuffle: {@code id} is the shuffle's number within the app as the engine (Spark)
 * numbers it. It is what executors name when they ask the driver's lifecycle manager where to push
 * or what to read.
 *
 * <p>Not to be confused with {@link ShuffleId}, which is Faro's shuffle as masters and workers see
 * it: one <em>generation</em> of an engine shuffle. The two numbers are equal until a stage retry
 * after lost data gives the re-run a fresh generation; the lifecycle manager answers each ask with
 * the generation to write or read. In the client, a {@code ShuffleId} is always a generation and an
 * {@code EngineShuffleId} always the engine's shuffle.
 */
public record EngineShuffleId(AppId app, int id) {
  public EngineShuffleId {
    requireNonNull(app, "app is null");
    if (id < 0) {
      throw new IllegalArgumentException("negative engine shuffle id " + id + " in app " + app);
    }
  }

  /** {@code APP/N}, as {@link ShuffleId#toString()} writes a generation. */
  @Override
  public String toString() {
    return app + "/" + id;
  }
}
