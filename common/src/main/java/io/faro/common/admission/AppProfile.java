package io.faro.common.admission;

import static java.util.Objects.requireNonNull;

import io.faro.common.log.LogSafe;

/**
 * An application as the masters' admission rules see it: the user that runs it, its queue and its
 * name, each empty when not known (an older client sends none), and the host it registered from.
 *
 * <p>What each is worth: {@code host} is the address of the connection the driver registered on,
 * which the leader sets itself (a client's is never taken); {@code user}, {@code queue} and {@code
 * name} are what the driver says (Spark's user, its YARN queue and its name): a driver that lies
 * about them is only refused or counted as what it claims, so admission rules and quotas keep
 * honest applications apart but are not a security boundary against a hostile one.
 */
public record AppProfile(String user, String queue, String name, String host) {
  /** Nothing known. */
  public static final AppProfile UNKNOWN = new AppProfile("", "", "");

  public AppProfile {
    requireNonNull(user, "user is null");
    requireNonNull(queue, "queue is null");
    requireNonNull(name, "name is null");
    requireNonNull(host, "host is null");
  }

  /** What a driver says of itself: no host yet. */
  public AppProfile(String user, String queue, String name) {
    this(user, queue, name, "");
  }

  /** This profile, registered from {@code host}. */
  public AppProfile withHost(String host) {
    return new AppProfile(user, queue, name, host);
  }

  @Override
  public String toString() {
    // From the wire: safe for one log line.
    return "user "
        + (user.isEmpty() ? "(unknown)" : LogSafe.text(user))
        + ", queue "
        + (queue.isEmpty() ? "(none)" : LogSafe.text(queue))
        + ", name "
        + (name.isEmpty() ? "(unknown)" : "'" + LogSafe.text(name) + "'");
  }
}
