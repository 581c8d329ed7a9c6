package io.faro.bench.workload;

/**
 * Records, bytes and a checksum per partition: what the map tasks wrote, or what the readers read.
 * The checksum is the sum of {@link RecordHash} values, so any order of arrival gives the same
 * tally, and a lost, duplicated, altered or misplaced record changes it.
 *
 * <p>Confined to one thread; tallies of several threads are combined with {@link #addAll} after
 * those threads are joined.
 */
public final class PartitionTally {
  private final long[] records;
  private final long[] bytes;
  private final long[] checksums;

  public PartitionTally(int partitions) {
    this.records = new long[partitions];
    this.bytes = new long[partitions];
    this.checksums = new long[partitions];
  }

  public int partitions() {
    return records.length;
  }

  public void add(int partition, int recordBytes, long hash) {
    records[partition]++;
    bytes[partition] += recordBytes;
    checksums[partition] += hash;
  }

  /**
   * Counts every record of {@code data[0, length)}, read from {@code partition}: records are {@code
   * recordSize} bytes each; a shorter tail counts as one (damaged) record, so that the tallies
   * differ.
   */
  public void addRecords(int partition, byte[] data, int length, int recordSize) {
    for (int offset = 0; offset < length; offset += recordSize) {
      int size = Math.min(recordSize, length - offset);
      add(partition, size, RecordHash.of(data, offset, size));
    }
  }

  public void addAll(PartitionTally other) {
    if (other.partitions() != partitions()) {
      throw new IllegalArgumentException(
          "tallies of " + other.partitions() + " and " + partitions() + " partitions");
    }
    for (int p = 0; p < records.length; p++) {
      records[p] += other.records[p];
      bytes[p] += other.bytes[p];
      checksums[p] += other.checksums[p];
    }
  }

  public long records(int partition) {
    return records[partition];
  }

  public long bytes(int partition) {
    return bytes[partition];
  }

  public long checksum(int partition) {
    return checksums[partition];
  }

  public long totalRecords() {
    long total = 0;
    for (long r : records) {
      total += r;
    }
    return total;
  }

  public long totalBytes() {
    long total = 0;
    for (long b : bytes) {
      total += b;
    }
    return total;
  }
}
