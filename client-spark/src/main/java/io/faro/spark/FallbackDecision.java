package io.faro.spark;

import io.faro.client.ClientOptions.FallbackPolicy;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.network.HostPort;
import java.util.List;
import java.util.Optional;

/**
 * Whether Faro carries a shuffle, decided in the order the driver learns the facts: the policy and
 * the application's settings, the shuffle's width, the masters' answer to the registration, the
 * last heartbeat, the placement. Each step gives a {@link Fallback} (a kind and a reason) or
 * nothing; {@link #refusal} is the error a job fails with instead under policy {@code never}. Pure:
 * no Spark, no network, no state.
 */
final class FallbackDecision {
  private FallbackDecision() {}

  /** Why a shuffle does not go through Faro, and the error behind it (or null). */
  record Fallback(FaroShuffleFallback.Kind kind, String reason, RuntimeException cause) {}

  /**
   * What is known before any master is asked: policy {@code always}, a setting that makes Faro
   * unsafe for this application ({@code unsafeSetting}, or null), or more partitions than {@code
   * maxPartitions}.
   */
  static Optional<Fallback> beforeMasters(
      FallbackPolicy policy, String unsafeSetting, int partitions, int maxPartitions) {
    if (policy == FallbackPolicy.ALWAYS) {
      return Optional.of(
          new Fallback(
              FaroShuffleFallback.Kind.POLICY, "faro.client.fallback.policy=always", null));
    }
    if (unsafeSetting != null) {
      return Optional.of(
          new Fallback(FaroShuffleFallback.Kind.UNSAFE_SETTING, unsafeSetting, null));
    }
    if (partitions > maxPartitions) {
      return Optional.of(
          new Fallback(
              FaroShuffleFallback.Kind.PARTITIONS,
              partitions
                  + " partitions, more than faro.client.fallback.max.partitions ("
                  + maxPartitions
                  + ")",
              null));
    }
    return Optional.empty();
  }

  /** The application could not register: refused by the admission rules, or no master answered. */
  static Fallback notRegistered(RuntimeException error) {
    boolean refused = error instanceof FaroException fe && fe.code() == ErrorCode.ADMISSION_REFUSED;
    return new Fallback(
        refused ? FaroShuffleFallback.Kind.REFUSED : FaroShuffleFallback.Kind.MASTERS_UNREACHABLE,
        error.getMessage(),
        error);
  }

  /**
   * Under policy {@code auto}, a registered application whose last heartbeat reached no master does
   * not place new shuffles on Faro; under {@code never} it tries (and fails if it must).
   */
  static Optional<Fallback> afterHeartbeat(
      FallbackPolicy policy, boolean mastersReachable, List<HostPort> masters) {
    if (policy != FallbackPolicy.AUTO || mastersReachable) {
      return Optional.empty();
    }
    return Optional.of(
        new Fallback(
            FaroShuffleFallback.Kind.MASTERS_UNREACHABLE,
            "the application's last heartbeat reached none of the masters "
                + masters
                + " (faro.master.endpoints)",
            null));
  }

  /** The cluster did not place the shuffle in time: over a quota, or no room or no answer. */
  static Fallback notPlaced(RuntimeException error) {
    boolean quota = codeIn(error) == ErrorCode.QUOTA_EXCEEDED;
    return new Fallback(
        quota ? FaroShuffleFallback.Kind.QUOTA : FaroShuffleFallback.Kind.NOT_PLACED,
        (quota ? "over a quota of the Faro cluster: " : "the Faro cluster did not place it: ")
            + error.getMessage(),
        null);
  }

  /** Under policy {@code never}: the error the job fails with instead of falling back. */
  static FaroException refusal(int shuffleId, Fallback fallback) {
    return new FaroException(
        switch (fallback.kind()) {
          case PARTITIONS -> ErrorCode.LIMIT_EXCEEDED;
          case REFUSED -> ErrorCode.ADMISSION_REFUSED;
          case QUOTA -> ErrorCode.QUOTA_EXCEEDED;
          default -> ErrorCode.CONNECTION_FAILED;
        },
        "Faro cannot carry shuffle "
            + shuffleId
            + " and spark.faro.client.fallback.policy is never (auto would use Spark's"
            + " built-in shuffle for it): "
            + fallback.reason(),
        fallback.cause());
  }

  /** The code of the first Faro error in {@code e}'s causes, or null. */
  private static ErrorCode codeIn(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof FaroException fe) {
        return fe.code();
      }
    }
    return null;
  }
}
