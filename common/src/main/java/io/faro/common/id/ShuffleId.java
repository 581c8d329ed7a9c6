package io.faro.common.id;

import static java.util.Objects.requireNonNull;

/**
 * One shuffle of one application. {@code shuffle} is Faro's internal shuffle number within the app;
 * it equals the engine's shuffle id until a stage retry gives a re-run a fresh one.
 */
public record ShuffleId(AppId app, int shuffle) {
  public ShuffleId {
    requireNonNull(app, "app is null");
    if (shuffle < 0) {
      throw new IllegalArgumentException("negative shuffle id " + shuffle + " in app " + app);
    }
  }

  @Override
  public String toString() {
    return app + "/" + shuffle;
  }
}
