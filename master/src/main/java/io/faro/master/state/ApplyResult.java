package io.faro.master.state;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.ErrorCode;
import io.faro.common.id.PartitionLocation;
import java.util.List;

/**
 * What applying one command did. A rejection is a normal, deterministic outcome (for example, slots
 * for an app that a racing entry removed): every master rejects the same entry.
 */
public sealed interface ApplyResult {

  /** The command changed the state (or found it already changed: commands are idempotent). */
  record Applied(List<PartitionLocation> locations) implements ApplyResult {
    public static final Applied NOTHING = new Applied(List.of());

    public Applied {
      locations = List.copyOf(locations);
    }
  }

  /** The command was refused; the state is unchanged. */
  record Rejected(ErrorCode code, String message) implements ApplyResult {
    public Rejected {
      requireNonNull(code, "code is null");
      requireNonNull(message, "message is null");
    }
  }
}
