package io.faro.common.error;

import io.faro.proto.ErrorCodeP;

/**
 * Every error Faro reports, mirrored by {@link ErrorCodeP} on the wire. Each code says whether
 * retrying the same request can help.
 */
public enum ErrorCode {
  INTERNAL(ErrorCodeP.INTERNAL, false),
  INVALID_REQUEST(ErrorCodeP.INVALID_REQUEST, false),
  NOT_LEADER(ErrorCodeP.NOT_LEADER, true),
  UNKNOWN_APP(ErrorCodeP.UNKNOWN_APP, false),
  UNKNOWN_SHUFFLE(ErrorCodeP.UNKNOWN_SHUFFLE, false),
  NO_AVAILABLE_WORKERS(ErrorCodeP.NO_AVAILABLE_WORKERS, true),
  RESERVE_FAILED(ErrorCodeP.RESERVE_FAILED, true),
  COMMIT_FAILED(ErrorCodeP.COMMIT_FAILED, false),
  UNKNOWN_PARTITION(ErrorCodeP.UNKNOWN_PARTITION, false),
  TIMEOUT(ErrorCodeP.TIMEOUT, true),
  CONNECTION_FAILED(ErrorCodeP.CONNECTION_FAILED, true),
  SHUTTING_DOWN(ErrorCodeP.SHUTTING_DOWN, true),
  DATA_CORRUPTED(ErrorCodeP.DATA_CORRUPTED, false),
  STORAGE_FAILED(ErrorCodeP.STORAGE_FAILED, false),
  UNSUPPORTED_MESSAGE(ErrorCodeP.UNSUPPORTED_MESSAGE, false),
  SHUFFLE_NOT_COMMITTED(ErrorCodeP.SHUFFLE_NOT_COMMITTED, true),
  /** Data is gone on every copy; retrying cannot help, re-running the producing stage can. */
  DATA_LOST(ErrorCodeP.DATA_LOST, false),
  /** A count, size or id over a configured limit; the message names the limit and its key. */
  LIMIT_EXCEEDED(ErrorCodeP.LIMIT_EXCEEDED, false),
  /** The request does not come from the owner of what it acts on (a stray or forged commit). */
  NOT_OWNER(ErrorCodeP.NOT_OWNER, false),
  /** The shuffle was committed before the request arrived: pushed data is in no file. */
  SHUFFLE_COMMITTED(ErrorCodeP.SHUFFLE_COMMITTED, false),
  /** The connection did not prove the identity the request needs, or its proof was wrong. */
  UNAUTHENTICATED(ErrorCodeP.UNAUTHENTICATED, false),
  /** The masters' admission rules refuse the application; the message names the rule. */
  ADMISSION_REFUSED(ErrorCodeP.ADMISSION_REFUSED, false),
  /** A new shuffle would take its application's user or queue over a quota. */
  QUOTA_EXCEEDED(ErrorCodeP.QUOTA_EXCEEDED, false),
  /**
   * The peer's release is too old or too new for this one or for the cluster's feature level; the
   * message names both versions.
   */
  UNSUPPORTED_VERSION(ErrorCodeP.UNSUPPORTED_VERSION, false);

  private final ErrorCodeP wire;
  private final boolean retryable;

  ErrorCode(ErrorCodeP wire, boolean retryable) {
    this.wire = wire;
    this.retryable = retryable;
  }

  public ErrorCodeP toProto() {
    return wire;
  }

  public boolean retryable() {
    return retryable;
  }

  public static ErrorCode fromProto(ErrorCodeP code) {
    for (ErrorCode c : values()) {
      if (c.wire == code) {
        return c;
      }
    }
    return INTERNAL;
  }
}
