package io.faro.common.error;

import static java.util.Objects.requireNonNull;

/** A failure with a code; {@link #retryable()} tells whether trying again can help. */
public class FaroException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final ErrorCode code;

  public FaroException(ErrorCode code, String message) {
    super(message);
    this.code = requireNonNull(code, "code is null");
  }

  public FaroException(ErrorCode code, String message, Throwable cause) {
    super(message, cause);
    this.code = requireNonNull(code, "code is null");
  }

  public ErrorCode code() {
    return code;
  }

  public boolean retryable() {
    return code.retryable();
  }

  @Override
  public String toString() {
    return getClass().getName()
        + " ["
        + code
        + (retryable() ? ", retryable" : "")
        + "]: "
        + getMessage();
  }
}
