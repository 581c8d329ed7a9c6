package io.faro.worker.partition;

import java.util.Arrays;

/**
 * The locations of one shuffle that are reserved here but have received nothing yet: what a
 * reservation costs until a location's first part arrives, a dozen bytes each in two arrays, not a
 * writer with its lists, file and layout. A shuffle of a million declared partitions whose maps
 * write a few thousand holds a million of these and a few thousand writers; its commit answers the
 * idle ones as empty without a task on any flusher.
 *
 * <p>Each location is its (partition, epoch) with the disk it was reserved on, the index of its
 * replica link in its shuffle's list of links (or none), whether it is a replica copy, and whether
 * it was sealed (a graceful stop or a drain: later parts go elsewhere). An open-addressing table
 * with linear probing, removal by backward shift; it grows by doubling, never past two thirds full.
 *
 * <p>Not thread-safe: used under its shuffle's lock ({@link ShuffleState}).
 */
final class IdleLocations {
  /** A free slot: keys are {@code partition << 32 | epoch}, both non-negative. */
  private static final long FREE = -1L;

  private static final int DISK_BITS = 14;
  private static final int LINK_BITS = 15;
  private static final int MAX_DISKS = 1 << DISK_BITS;

  /** Most distinct replica links of one shuffle's idle locations (one per replica peer). */
  static final int MAX_LINKS = (1 << LINK_BITS) - 1;

  private static final int SEALED = 1 << (DISK_BITS + LINK_BITS);
  private static final int REPLICA_COPY = 1 << (DISK_BITS + LINK_BITS + 1);

  private long[] keys = new long[0];
  private int[] values = new int[0];
  private int size;

  /** Idle locations not sealed, by disk index. */
  private int[] openByDisk = new int[0];

  /** What one idle location was reserved as; see {@link IdleLocations}. */
  record Idle(int diskIndex, int linkIndex, boolean replicaCopy, boolean sealed) {
    /** No replica link. */
    static final int NO_LINK = -1;
  }

  /** Idle locations held. */
  int size() {
    return size;
  }

  boolean contains(int partition, int epoch) {
    return find(key(partition, epoch)) >= 0;
  }

  /**
   * Adds an idle location; one already held stays as it is (a reservation is idempotent).
   *
   * @param linkIndex the index of its replica link in its shuffle's links, or {@link Idle#NO_LINK}
   */
  void add(int partition, int epoch, int diskIndex, int linkIndex, boolean replicaCopy) {
    if (partition < 0 || epoch < 0) {
      throw new IllegalArgumentException("bad partition " + partition + " epoch " + epoch);
    }
    if (diskIndex < 0 || diskIndex >= MAX_DISKS) {
      throw new IllegalArgumentException("disk index out of range: " + diskIndex);
    }
    if (linkIndex < Idle.NO_LINK || linkIndex >= MAX_LINKS) {
      throw new IllegalArgumentException("replica link index out of range: " + linkIndex);
    }
    long key = key(partition, epoch);
    if (find(key) >= 0) {
      return;
    }
    ensureRoom(1);
    int value = diskIndex | ((linkIndex + 1) << DISK_BITS) | (replicaCopy ? REPLICA_COPY : 0);
    insert(key, value);
    countOpen(value, 1);
    size++;
  }

  /** Makes room for {@code more} locations, so that adding them rehashes at most once. */
  void ensureRoom(int more) {
    long needed = size + (long) more;
    if (needed * 3 <= keys.length * 2L) {
      return;
    }
    int capacity = Math.max(16, keys.length);
    while (needed * 3 > capacity * 2L) {
      capacity *= 2;
    }
    resize(capacity);
  }

  /** The idle location (partition, epoch), or null. */
  Idle get(int partition, int epoch) {
    int slot = find(key(partition, epoch));
    return slot < 0 ? null : idle(values[slot]);
  }

  /** Removes and returns the idle location (partition, epoch): its first part arrived. */
  Idle take(int partition, int epoch) {
    int slot = find(key(partition, epoch));
    if (slot < 0) {
      return null;
    }
    Idle idle = idle(values[slot]);
    countOpen(values[slot], -1);
    remove(slot);
    size--;
    return idle;
  }

  /** Marks every idle location sealed: their parts go to new locations from now on. */
  void sealAll() {
    for (int i = 0; i < keys.length; i++) {
      if (keys[i] != FREE) {
        values[i] |= SEALED;
      }
    }
    Arrays.fill(openByDisk, 0);
  }

  /** The idle locations, as keys. */
  LocationKeys keys() {
    long[] sorted = new long[size];
    int n = 0;
    for (long k : keys) {
      if (k != FREE) {
        sorted[n++] = k;
      }
    }
    Arrays.sort(sorted);
    return LocationKeys.ofSorted(sorted);
  }

  /** Adds the idle locations that still take data (not sealed) to {@code counts}, by disk index. */
  void countOpenByDisk(int[] counts) {
    for (int d = 0; d < openByDisk.length && d < counts.length; d++) {
      counts[d] += openByDisk[d];
    }
  }

  /** The idle locations that still take data (not sealed). */
  int open() {
    int open = 0;
    for (int n : openByDisk) {
      open += n;
    }
    return open;
  }

  private void countOpen(int value, int delta) {
    if ((value & SEALED) != 0) {
      return;
    }
    int disk = value & (MAX_DISKS - 1);
    if (disk >= openByDisk.length) {
      openByDisk = Arrays.copyOf(openByDisk, disk + 1);
    }
    openByDisk[disk] += delta;
  }

  private static Idle idle(int value) {
    return new Idle(
        value & (MAX_DISKS - 1),
        ((value >>> DISK_BITS) & MAX_LINKS) - 1,
        (value & REPLICA_COPY) != 0,
        (value & SEALED) != 0);
  }

  private static long key(int partition, int epoch) {
    return LocationKeys.key(partition, epoch);
  }

  private int slotOf(long key) {
    long h = key * 0x9E3779B97F4A7C15L;
    return (int) ((h ^ (h >>> 32)) & (keys.length - 1));
  }

  private int find(long key) {
    if (keys.length == 0) {
      return -1;
    }
    for (int i = slotOf(key); ; i = (i + 1) & (keys.length - 1)) {
      if (keys[i] == key) {
        return i;
      }
      if (keys[i] == FREE) {
        return -1;
      }
    }
  }

  private void insert(long key, int value) {
    int i = slotOf(key);
    while (keys[i] != FREE) {
      i = (i + 1) & (keys.length - 1);
    }
    keys[i] = key;
    values[i] = value;
  }

  /** Frees {@code slot}, moving back the entries of its probe run that would no longer be found. */
  private void remove(int slot) {
    int mask = keys.length - 1;
    int hole = slot;
    for (int i = (slot + 1) & mask; keys[i] != FREE; i = (i + 1) & mask) {
      int home = slotOf(keys[i]);
      // The entry at i may fill the hole when its home slot is not within (hole, i].
      boolean between = hole <= i ? home > hole && home <= i : home > hole || home <= i;
      if (!between) {
        keys[hole] = keys[i];
        values[hole] = values[i];
        hole = i;
      }
    }
    keys[hole] = FREE;
  }

  private void resize(int capacity) {
    long[] oldKeys = keys;
    int[] oldValues = values;
    keys = new long[capacity];
    Arrays.fill(keys, FREE);
    values = new int[capacity];
    for (int i = 0; i < oldKeys.length; i++) {
      if (oldKeys[i] != FREE) {
        insert(oldKeys[i], oldValues[i]);
      }
    }
  }
}
