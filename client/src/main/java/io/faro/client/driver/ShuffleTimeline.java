package io.faro.client.driver;

import java.util.Locale;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * When each step of one generation's life happened, as the driver saw it: the moments are set once
 * (the first time each happens), in {@link System#nanoTime} terms, and read as the phases between
 * them ({@link Phase}). Cheap enough to keep for every shuffle: one array of longs.
 */
final class ShuffleTimeline {
  /** A moment in a generation's life. */
  enum Mark {
    /** Spark registered the shuffle (faro.client.placement.at.register places it from here). */
    REGISTERED,
    /** Placement started: at registration, or at the first executor's request. */
    PLACEMENT_STARTED,
    /** The masters answered the first slot request. */
    SLOTS_GRANTED,
    /** Every chosen worker reserved its locations; the push locations are answered. */
    PLACED,
    /** The first executor asked where to push: its map stage is running. */
    FIRST_ASK,
    /** The last map's end reached the driver: the commit starts. */
    COMMIT_STARTED,
    /** Every worker with data answered the commit: the file groups are known. */
    COMMITTED,
    /** The file groups were first answered to a reader. */
    FIRST_READ
  }

  /** A phase: the time from one mark to a later one (0 when the later came first). */
  enum Phase {
    /** From registration to the map stage's first request: what placement can hide in. */
    SCHEDULING("scheduling", Mark.REGISTERED, Mark.FIRST_ASK),
    SLOTS("slots", Mark.PLACEMENT_STARTED, Mark.SLOTS_GRANTED),
    RESERVE("reserve", Mark.SLOTS_GRANTED, Mark.PLACED),
    PLACEMENT("placement", Mark.PLACEMENT_STARTED, Mark.PLACED),
    /** What the first map tasks waited for their push locations. */
    PLACEMENT_WAIT("placement_wait", Mark.FIRST_ASK, Mark.PLACED),
    MAPS("maps", Mark.FIRST_ASK, Mark.COMMIT_STARTED),
    COMMIT("commit", Mark.COMMIT_STARTED, Mark.COMMITTED),
    FIRST_READ("first_read", Mark.COMMITTED, Mark.FIRST_READ);

    final String label;
    final Mark from;
    final Mark to;

    Phase(String label, Mark from, Mark to) {
      this.label = label;
      this.from = from;
      this.to = to;
    }
  }

  private final AtomicLongArray at = new AtomicLongArray(Mark.values().length);

  /** Records {@code mark} now, unless it was recorded before; true if this call recorded it. */
  boolean mark(Mark mark) {
    long now = System.nanoTime();
    return at.compareAndSet(mark.ordinal(), 0, now == 0 ? 1 : now);
  }

  /** Forgets {@code mark} (a placement that failed: the next one records its own times). */
  void unmark(Mark mark) {
    at.set(mark.ordinal(), 0);
  }

  /** Nanoseconds of {@code phase}, or -1 while either of its marks is missing. */
  long nanos(Phase phase) {
    long from = at.get(phase.from.ordinal());
    long to = at.get(phase.to.ordinal());
    return from == 0 || to == 0 ? -1 : Math.max(0, to - from);
  }

  /** The phases known so far, e.g. {@code slots 2.81 ms, reserve 0.30 ms, ...}. */
  String describe() {
    StringBuilder out = new StringBuilder();
    for (Phase p : Phase.values()) {
      long n = nanos(p);
      if (n >= 0) {
        out.append(out.length() == 0 ? "" : ", ")
            .append(p.label)
            .append(String.format(Locale.ROOT, " %.2f ms", n / 1e6));
      }
    }
    return out.length() == 0 ? "nothing yet" : out.toString();
  }
}
