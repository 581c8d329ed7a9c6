package io.faro.common.id;

import static java.util.Objects.requireNonNull;

import java.util.Comparator;

/**
 * One shuffle of one application. {@code shuffle} is Faro's internal shuffle number within the app;
 * it equals the engine's shuffle id until a stage retry gives a re-run a fresh one.
 */
public record ShuffleId(AppId app, int shuffle) {
  /** By app id, then shuffle number: the order of the masters' state and of the HTTP API. */
  public static final Comparator<ShuffleId> ORDER =
      Comparator.comparing((ShuffleId s) -> s.app().value()).thenComparingInt(ShuffleId::shuffle);

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

  /** {@code APP/N} with the app id as it is (not escaped for a log line): the HTTP API's form. */
  public String key() {
    return app.value() + "/" + shuffle;
  }

  /**
   * Reads {@link #key()}'s form.
   *
   * @throws IllegalArgumentException when {@code key} is not {@code APP/N} with a valid app id
   */
  public static ShuffleId parseKey(String key) {
    int slash = key.lastIndexOf('/');
    if (slash <= 0) {
      throw new IllegalArgumentException("a shuffle is APP/N, not " + key);
    }
    try {
      return new ShuffleId(
          new AppId(key.substring(0, slash)), Integer.parseInt(key.substring(slash + 1)));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("a shuffle is APP/N with N a number, not " + key);
    }
  }
}
