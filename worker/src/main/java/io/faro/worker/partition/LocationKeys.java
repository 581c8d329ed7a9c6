package io.faro.worker.partition;

import io.faro.common.id.PartitionKey;
import java.util.Arrays;
import java.util.function.LongConsumer;

/**
 * A sorted, immutable set of locations of one shuffle as {@code partition << 32 | epoch}: what a
 * commit knows of the locations that received nothing, or what a lifecycle manager asks about, at
 * eight bytes a location instead of an object each.
 */
public final class LocationKeys {
  public static final LocationKeys NONE = new LocationKeys(new long[0]);

  private final long[] keys;

  private LocationKeys(long[] sorted) {
    this.keys = sorted;
  }

  /** The set of {@code keys}, in any order, duplicates dropped; the array is not kept. */
  public static LocationKeys of(long[] keys) {
    long[] sorted = keys.clone();
    Arrays.sort(sorted);
    int n = 0;
    for (int i = 0; i < sorted.length; i++) {
      if (i == 0 || sorted[i] != sorted[i - 1]) {
        sorted[n++] = sorted[i];
      }
    }
    return n == 0 ? NONE : new LocationKeys(Arrays.copyOf(sorted, n));
  }

  /** {@code sorted}: ascending, without duplicates, and not modified after. */
  static LocationKeys ofSorted(long[] sorted) {
    return sorted.length == 0 ? NONE : new LocationKeys(sorted);
  }

  public static long key(int partition, int epoch) {
    return ((long) partition << 32) | (epoch & 0xFFFFFFFFL);
  }

  public static long key(PartitionKey key) {
    return key(key.partition(), key.epoch());
  }

  public static int partition(long key) {
    return (int) (key >>> 32);
  }

  public static int epoch(long key) {
    return (int) key;
  }

  public int size() {
    return keys.length;
  }

  public boolean isEmpty() {
    return keys.length == 0;
  }

  public boolean contains(int partition, int epoch) {
    return Arrays.binarySearch(keys, key(partition, epoch)) >= 0;
  }

  /** Each key, ascending. */
  public void forEach(LongConsumer each) {
    for (long k : keys) {
      each.accept(k);
    }
  }

  /** A copy of the keys, ascending. */
  public long[] toArray() {
    return keys.clone();
  }

  @Override
  public String toString() {
    return keys.length + " locations";
  }
}
