package io.faro.client;

/**
 * How a shuffle's partitions fall into pages of {@code size} (faro.client.partitions.per.page):
 * page {@code k} holds partitions [k * size, (k + 1) * size), the last one fewer. The driver places
 * a shuffle page by page and executors ask for its locations and files a page at a time.
 */
public record PartitionPages(int size) {
  public PartitionPages {
    if (size < 1) {
      throw new IllegalArgumentException("a page holds at least 1 partition, got " + size);
    }
  }

  /** The page of {@code partition}. */
  public int page(int partition) {
    return partition / size;
  }

  /** How many pages {@code numPartitions} partitions fill. */
  public int count(int numPartitions) {
    return numPartitions <= 0 ? 0 : (int) ((numPartitions + (long) size - 1) / size);
  }

  /** The first partition of {@code page}. */
  public int start(int page) {
    return (int) Math.min(Integer.MAX_VALUE, (long) page * size);
  }

  /** The end (exclusive) of {@code page} in a shuffle of {@code numPartitions} partitions. */
  public int end(int page, int numPartitions) {
    return (int) Math.min(numPartitions, (long) page * size + size);
  }

  /** Whether {@code numPartitions} partitions fit one page. */
  public boolean onePage(int numPartitions) {
    return numPartitions <= size;
  }
}
