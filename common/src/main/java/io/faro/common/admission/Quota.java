package io.faro.common.admission;

import static java.util.Objects.requireNonNull;

import java.util.Locale;

/**
 * What the applications of one user, or of one queue, may hold together on a Faro cluster:
 * concurrent shuffles, their partitions, and bytes on the workers. Written {@code limit user=U|
 * queue=Q [shuffles=N] [partitions=N] [bytes=SIZE]}, {@code *} for each user (queue) on its own;
 * checked when a new shuffle asks for its first slots, never against a shuffle already placed.
 *
 * @param byQueue whether it limits a queue (else a user)
 * @param name the user or queue, or {@code *} for each
 * @param maxShuffles most shuffles at once, or 0 for no limit (so too the others)
 */
public record Quota(
    boolean byQueue, String name, long maxShuffles, long maxPartitions, long maxBytes) {
  /** Each user, or each queue, on its own. */
  public static final String EACH = "*";

  public Quota {
    requireNonNull(name, "name is null");
    if (name.isEmpty()) {
      throw new IllegalArgumentException("a limit names a user or a queue (or * for each)");
    }
    if (maxShuffles < 0 || maxPartitions < 0 || maxBytes < 0) {
      throw new IllegalArgumentException("a limit is not negative");
    }
    if (maxShuffles == 0 && maxPartitions == 0 && maxBytes == 0) {
      throw new IllegalArgumentException("a limit sets shuffles, partitions or bytes");
    }
  }

  /** The user or queue of {@code app} this quota counts it under, or null when it does not. */
  public String groupOf(AppProfile app) {
    String own = byQueue ? app.queue() : app.user();
    if (own.isEmpty()) {
      return null;
    }
    return name.equals(EACH) || name.equals(own) ? own : null;
  }

  /** Who it limits, e.g. "user ann" or "each queue". */
  public String scope() {
    String kind = byQueue ? "queue" : "user";
    return name.equals(EACH) ? "each " + kind : kind + " " + name;
  }

  /** The quota as it is written. */
  public String text() {
    StringBuilder text =
        new StringBuilder("limit ").append(byQueue ? "queue=" : "user=").append(name);
    if (maxShuffles > 0) {
      text.append(" shuffles=").append(maxShuffles);
    }
    if (maxPartitions > 0) {
      text.append(" partitions=").append(maxPartitions);
    }
    if (maxBytes > 0) {
      text.append(" bytes=").append(bytes(maxBytes));
    }
    return text.toString();
  }

  @Override
  public String toString() {
    return text();
  }

  /** Bytes as written back: the largest binary unit that divides them. */
  static String bytes(long bytes) {
    String[] units = {"t", "g", "m", "k"};
    long[] sizes = {1L << 40, 1L << 30, 1L << 20, 1L << 10};
    for (int i = 0; i < units.length; i++) {
      if (bytes % sizes[i] == 0) {
        return bytes / sizes[i] + units[i];
      }
    }
    return Long.toString(bytes);
  }

  /** Parses a size: digits with an optional k, m, g or t (binary units). */
  static long parseBytes(String value) {
    String v = value.toLowerCase(Locale.ROOT);
    long unit = 1;
    char last = v.isEmpty() ? ' ' : v.charAt(v.length() - 1);
    switch (last) {
      case 'k' -> unit = 1L << 10;
      case 'm' -> unit = 1L << 20;
      case 'g' -> unit = 1L << 30;
      case 't' -> unit = 1L << 40;
      default -> {}
    }
    String digits = unit == 1 ? v : v.substring(0, v.length() - 1);
    try {
      long n = Long.parseLong(digits);
      if (n <= 0) {
        throw new NumberFormatException();
      }
      return Math.multiplyExact(n, unit);
    } catch (NumberFormatException | ArithmeticException e) {
      throw new IllegalArgumentException(
          "bytes must be a positive size like 500g or 2t (k, m, g, t: binary units), not " + value);
    }
  }
}
