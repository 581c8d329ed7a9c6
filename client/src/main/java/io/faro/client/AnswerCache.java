package io.faro.client;

import io.faro.common.network.Futures;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Answers of the lifecycle manager that this executor's tasks share, one per key: the first caller
 * asks, every caller waits for the same answer, and an answer that failed (or was not there in
 * time) is dropped so that the next caller asks again. Thread-safe.
 */
final class AnswerCache<K, T> {
  private final Map<K, CompletableFuture<T>> answers = new ConcurrentHashMap<>();
  private final Duration backstop;

  /**
   * @param backstop the longest a caller waits: the asks carry their own timeouts, so this bound
   *     only guards against a lost completion
   */
  AnswerCache(Duration backstop) {
    this.backstop = backstop;
  }

  /**
   * The answer for {@code key}, asked by {@code ask} unless it is cached or on its way; waits for
   * it. {@code what} names it in a timeout's message.
   */
  T get(K key, Function<? super K, ? extends CompletableFuture<T>> ask, String what) {
    return await(key, answers.computeIfAbsent(key, ask), what);
  }

  /** The answer for {@code key}, waited for, if some caller asked for it; else null. */
  T ifAsked(K key, String what) {
    CompletableFuture<T> f = answers.get(key);
    return f == null ? null : await(key, f, what);
  }

  /** Drops the answers whose key matches. */
  void removeIf(Predicate<? super K> matches) {
    answers.keySet().removeIf(matches);
  }

  private T await(K key, CompletableFuture<T> f, String what) {
    try {
      // The call itself carries its timeout; this bound only guards against a lost completion.
      return Futures.await(f, backstop, what);
    } catch (RuntimeException e) {
      answers.remove(key, f); // let the next task ask again
      throw e;
    }
  }
}
