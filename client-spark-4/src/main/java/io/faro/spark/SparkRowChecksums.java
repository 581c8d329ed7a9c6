package io.faro.spark;

import org.apache.spark.ShuffleDependency;
import org.apache.spark.shuffle.checksum.RowBasedChecksum;
import org.apache.spark.shuffle.checksum.RowBasedChecksum$;

/**
 * {@link RowChecksums} with the checksum objects of Spark 4.1+ that the shuffle dependency carries
 * (one per reduce partition; each task has its own deserialized copy). Loaded only on a Spark that
 * has them: see {@link SparkLine#rowChecksums}.
 */
final class SparkRowChecksums implements RowChecksums {
  private final RowBasedChecksum[] checksums;

  private SparkRowChecksums(RowBasedChecksum[] checksums) {
    this.checksums = checksums;
  }

  static RowChecksums of(ShuffleDependency<?, ?, ?> dependency) {
    RowBasedChecksum[] checksums = dependency.rowBasedChecksums();
    return checksums == null || checksums.length == 0
        ? RowChecksums.NONE
        : new SparkRowChecksums(checksums);
  }

  @Override
  public boolean enabled() {
    return true;
  }

  @Override
  public void update(int partition, Object key, Object value) {
    checksums[partition].update(key, value);
  }

  @Override
  public long value() {
    return RowBasedChecksum$.MODULE$.getAggregatedChecksumValue(checksums);
  }
}
