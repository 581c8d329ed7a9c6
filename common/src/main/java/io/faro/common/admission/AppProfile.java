package io.faro.common.admission;

import static java.util.Objects.requireNonNull;

/**
 * An application as the masters' admission rules see it: the user that runs it, its queue and its
 * name, each empty when not known (an older client sends none).
 */
public record AppProfile(String user, String queue, String name) {
  /** Nothing known. */
  public static final AppProfile UNKNOWN = new AppProfile("", "", "");

  public AppProfile {
    requireNonNull(user, "user is null");
    requireNonNull(queue, "queue is null");
    requireNonNull(name, "name is null");
  }

  @Override
  public String toString() {
    // From the wire: safe for one log line.
    return "user "
        + (user.isEmpty() ? "(unknown)" : io.faro.common.log.LogSafe.text(user))
        + ", queue "
        + (queue.isEmpty() ? "(none)" : io.faro.common.log.LogSafe.text(queue))
        + ", name "
        + (name.isEmpty() ? "(unknown)" : "'" + io.faro.common.log.LogSafe.text(name) + "'");
  }
}
