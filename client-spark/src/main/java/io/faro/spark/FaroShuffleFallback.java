package io.faro.spark;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.apache.spark.scheduler.SparkListenerEvent;

/**
 * Posted on the driver's listener bus when a shuffle uses Spark's built-in shuffle instead of
 * Faro's: the shuffle, the policy (faro.client.fallback.policy), why, and the kind of reason. Spark
 * writes it to the event log like its own events (a listener or a history tool reads it there); one
 * without Faro's jar skips it.
 */
public final class FaroShuffleFallback implements SparkListenerEvent {
  /** Why a shuffle fell back. */
  public enum Kind {
    /** faro.client.fallback.policy=always. */
    POLICY,
    /** More partitions than faro.client.fallback.max.partitions. */
    PARTITIONS,
    /** A setting makes Faro unsafe for this application (e.g. userClassPathFirst). */
    UNSAFE_SETTING,
    /** The masters did not register the application, or no longer answer it. */
    MASTERS_UNREACHABLE,
    /** The cluster did not place the shuffle: no worker with room, a limit of the masters. */
    NOT_PLACED,
    /** The masters' admission rules refused the application (the reason names the rule). */
    REFUSED,
    /** The shuffle would take the application's user or queue over a quota of the masters. */
    QUOTA
  }

  private final int shuffleId;
  private final String policy;
  private final Kind kind;
  private final String reason;

  /** Also how Spark's JsonProtocol reads the event back from an event log (by these names). */
  @JsonCreator
  public FaroShuffleFallback(
      @JsonProperty("shuffleId") int shuffleId,
      @JsonProperty("policy") String policy,
      @JsonProperty("kind") Kind kind,
      @JsonProperty("reason") String reason) {
    this.shuffleId = shuffleId;
    this.policy = policy;
    this.kind = kind;
    this.reason = reason;
  }

  public int getShuffleId() {
    return shuffleId;
  }

  public String getPolicy() {
    return policy;
  }

  public Kind getKind() {
    return kind;
  }

  public String getReason() {
    return reason;
  }

  @Override
  public String toString() {
    return "FaroShuffleFallback(shuffle "
        + shuffleId
        + ", policy "
        + policy
        + ", "
        + kind
        + ": "
        + reason
        + ")";
  }
}
