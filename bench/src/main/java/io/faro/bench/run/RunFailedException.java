package io.faro.bench.run;

/** The run could not complete: a task failed or the run's time limit passed. */
public final class RunFailedException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public RunFailedException(String message, Throwable cause) {
    super(message, cause);
  }
}
