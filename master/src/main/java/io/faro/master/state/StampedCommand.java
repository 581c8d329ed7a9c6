package io.faro.master.state;

import static java.util.Objects.requireNonNull;

/**
 * A command with the leader's wall-clock time. Apply uses this time, never its own clock, so that
 * every master computes the same state from the same log.
 */
public record StampedCommand(long timestampMs, StateCommand command) {
  public StampedCommand {
    requireNonNull(command, "command is null");
    if (timestampMs <= 0) {
      throw new IllegalArgumentException("command " + command + " has no timestamp");
    }
  }
}
