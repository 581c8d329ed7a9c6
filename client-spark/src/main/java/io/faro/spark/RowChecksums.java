package io.faro.spark;

/**
 * A map task's order-independent checksum of the records it writes, one per reduce partition, as
 * Spark 4.1+ computes in its own shuffle writer (SPARK-51756) when the shuffle dependency asks for
 * it ({@code spark.sql.shuffle.orderIndependentChecksum.enabled}): the driver compares a re-run
 * map's value with the first's, and re-runs what read the first if they differ. Faro computes it
 * with Spark's own checksum objects on the same records Spark would (each record before any
 * map-side combine), so the value equals the built-in shuffle's and Spark's protection works
 * through Faro. {@link #NONE} where the running Spark has no such checksum or the shuffle asks for
 * none: the map status then carries 0, as Spark's own writer reports then.
 */
interface RowChecksums {
  RowChecksums NONE =
      new RowChecksums() {
        @Override
        public boolean enabled() {
          return false;
        }

        @Override
        public void update(int partition, Object key, Object value) {}

        @Override
        public long value() {
          return 0;
        }
      };

  /** Whether the shuffle asks for checksums (else {@link #update} need not be called). */
  boolean enabled();

  /** Adds one record, going to reduce partition {@code partition}, to its partition's checksum. */
  void update(int partition, Object key, Object value);

  /** The map output's checksum: Spark's aggregate of the partitions'. */
  long value();
}
