package io.faro.spark;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Array;
import org.apache.spark.ShuffleDependency;
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
 * Spark 4's (Scala 2.13). {@code client-spark} holds Spark 3.5's, and the source both share.
 *
 * <p>One jar serves Spark 4.0, 4.1 and 4.2, which differ here: 4.1 added a map output's row
 * checksum to {@code MapStatus.apply} and to {@code ExternalSorter}'s constructor (SPARK-51756).
 * The jar is built against the newest line, and this class finds at load which of the two forms the
 * running Spark has, once.
 */
final class SparkLine {
  private SparkLine() {}

  /** The Spark line this class was built for, as users name it. */
  static final String NAME = "Spark 4";

  private static final MethodHandle MAP_STATUS_WITH_CHECKSUM;
  private static final MethodHandle MAP_STATUS;
  private static final MethodHandle SORTER_WITH_CHECKSUMS;
  private static final MethodHandle SORTER;

  static {
    MethodHandles.Lookup lookup = MethodHandles.publicLookup();
    MAP_STATUS_WITH_CHECKSUM =
        find(
            lookup,
            MapStatus$.class,
            MethodType.methodType(
                MapStatus.class, BlockManagerId.class, long[].class, long.class, long.class));
    MAP_STATUS =
        MAP_STATUS_WITH_CHECKSUM != null
            ? null
            : find(
                lookup,
                MapStatus$.class,
                MethodType.methodType(
                    MapStatus.class, BlockManagerId.class, long[].class, long.class));
    Class<?> checksums = checksumArrayClass();
    MethodType sorter =
        MethodType.methodType(
            void.class,
            TaskContext.class,
            Option.class,
            Option.class,
            Option.class,
            Serializer.class);
    SORTER_WITH_CHECKSUMS =
        checksums == null ? null : constructor(lookup, sorter.appendParameterTypes(checksums));
    SORTER = SORTER_WITH_CHECKSUMS != null ? null : constructor(lookup, sorter);
    if ((MAP_STATUS_WITH_CHECKSUM == null && MAP_STATUS == null)
        || (SORTER_WITH_CHECKSUMS == null && SORTER == null)) {
      throw new IllegalStateException(
          "this Faro client (faro-client-spark-4) runs on Spark 4.0, 4.1 and 4.2; the Spark here ("
              + org.apache.spark.package$.MODULE$.SPARK_VERSION()
              + ") has neither form of MapStatus.apply or ExternalSorter it knows");
    }
  }

  private static MethodHandle find(MethodHandles.Lookup lookup, Class<?> owner, MethodType type) {
    try {
      return lookup.findVirtual(owner, "apply", type);
    } catch (NoSuchMethodException | IllegalAccessException e) {
      return null;
    }
  }

  private static MethodHandle constructor(MethodHandles.Lookup lookup, MethodType type) {
    try {
      return lookup.findConstructor(ExternalSorter.class, type);
    } catch (NoSuchMethodException | IllegalAccessException e) {
      return null;
    }
  }

  private static Class<?> checksumArrayClass() {
    try {
      return Class.forName(
              "org.apache.spark.shuffle.checksum.RowBasedChecksum",
              false,
              SparkLine.class.getClassLoader())
          .arrayType();
    } catch (ClassNotFoundException e) {
      return null; // Spark 4.0
    }
  }

  /**
   * The row checksums {@code dependency} asks its map tasks for: Spark 4.1+'s, {@link
   * RowChecksums#NONE} on Spark 4.0 (which has none) or when the shuffle asks for none.
   */
  static RowChecksums rowChecksums(ShuffleDependency<?, ?, ?> dependency) {
    return SORTER_WITH_CHECKSUMS == null
        ? RowChecksums.NONE
        : SparkRowChecksums.of(dependency); // loads a class that exists from Spark 4.1 on only
  }

  /** A map's output status with its checksum (0: none computed; Spark 4.0 takes none). */
  static MapStatus mapStatus(BlockManagerId location, long[] lengths, long taskId, long checksum) {
    try {
      return MAP_STATUS_WITH_CHECKSUM != null
          ? (MapStatus)
              MAP_STATUS_WITH_CHECKSUM.invoke(
                  MapStatus$.MODULE$, location, lengths, taskId, checksum)
          : (MapStatus) MAP_STATUS.invoke(MapStatus$.MODULE$, location, lengths, taskId);
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new IllegalStateException(e);
    }
  }

  /** A sorter of a reduce task's records by key, spilling as Spark's own readers do. */
  @SuppressWarnings("rawtypes")
  static ExternalSorter sorter(TaskContext context, Ordering ordering, Serializer serializer) {
    Option<Ordering> order = Option.apply(ordering);
    try {
      return SORTER_WITH_CHECKSUMS != null
          ? (ExternalSorter)
              SORTER_WITH_CHECKSUMS.invoke(
                  context,
                  Option.empty(),
                  Option.empty(),
                  order,
                  serializer,
                  Array.newInstance(
                      SORTER_WITH_CHECKSUMS.type().parameterType(5).getComponentType(), 0))
          : (ExternalSorter)
              SORTER.invoke(context, Option.empty(), Option.empty(), order, serializer);
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new IllegalStateException(e);
    }
  }
}
