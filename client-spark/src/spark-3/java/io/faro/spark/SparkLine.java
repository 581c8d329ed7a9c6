package io.faro.spark;

import org.apache.spark.TaskContext;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.scheduler.MapStatus$;
import org.apache.spark.serializer.Serializer;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.util.collection.ExternalSorter;
import scala.Option;
import scala.math.Ordering;

/**
 * What differs between the Spark lines Faro's client is built for, behind one signature: this is
 * Spark 3.5's (Scala 2.12). {@code client-spark-4} holds Spark 4's; everything else in
 * io.faro.spark is one source for both.
 */
final class SparkLine {
  private SparkLine() {}

  /** The Spark line this class was built for, as users name it. */
  static final String NAME = "Spark 3.5";

  /** A map's output status; Spark 3.5 has no map-output checksum, so {@code checksum} is unused. */
  static MapStatus mapStatus(BlockManagerId location, long[] lengths, long taskId, long checksum) {
    return MapStatus$.MODULE$.apply(location, lengths, taskId);
  }

  /** Spark 3.5 computes no row checksum of map outputs. */
  static RowChecksums rowChecksums(org.apache.spark.ShuffleDependency<?, ?, ?> dependency) {
    return RowChecksums.NONE;
  }

  /** A sorter of a reduce task's records by key, spilling as Spark's own readers do. */
  @SuppressWarnings({"rawtypes", "unchecked"})
  static ExternalSorter sorter(TaskContext context, Ordering ordering, Serializer serializer) {
    return new ExternalSorter(
        context, Option.empty(), Option.empty(), Option.apply(ordering), serializer);
  }
}
