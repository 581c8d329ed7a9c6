package io.faro.spark;

import io.faro.client.MapAttempt;
import io.faro.client.ShuffleClient;
import io.faro.client.push.MapPusher;
import java.io.OutputStream;
import java.util.Arrays;
import org.apache.spark.Aggregator;
import org.apache.spark.Partitioner;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.TaskContext;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.serializer.SerializationStream;
import org.apache.spark.serializer.SerializerInstance;
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter;
import org.apache.spark.shuffle.ShuffleWriter;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.BlockManagerId$;
import scala.Option;
import scala.Product2;
import scala.collection.Iterator;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * Writes one map task's output to Faro: partitions and serializes each record, gathers record bytes
 * per partition into batches and pushes them (see {@link MapPusher}), then reports the attempt to
 * the driver. Every batch is a self-contained serialized stream, so readers decode batches
 * independently; how that holds depends on the serializer (see the two sinks below).
 */
final class FaroShuffleWriter<K, V> extends ShuffleWriter<K, V> {
  /**
   * Map statuses name a place no executor has, so losing an executor never drops Faro map outputs.
   */
  private static final BlockManagerId FARO_LOCATION =
      BlockManagerId$.MODULE$.apply("faro-shuffle", "faro.shuffle.service", 1, Option.empty());

  private static final ClassTag<Object> ANY = ClassTag$.MODULE$.Any();

  private final FaroShuffleHandle<K, V, ?> handle;
  private final TaskContext context;
  private final ShuffleWriteMetricsReporter metrics;
  private final ShuffleClient client;
  private MapPusher pusher;
  private long[] lengths = new long[0];
  private MapStatus mapStatus;
  private RowChecksums checksums = RowChecksums.NONE;
  private boolean stopped;

  FaroShuffleWriter(
      FaroShuffleHandle<K, V, ?> handle,
      TaskContext context,
      ShuffleWriteMetricsReporter metrics,
      ShuffleClient client) {
    this.handle = handle;
    this.context = context;
    this.metrics = metrics;
    this.client = client;
  }

  /**
   * Unique per map attempt across stage attempts: attempt numbers restart with each stage attempt.
   */
  private int attemptId() {
    return (context.stageAttemptNumber() << 16) | (context.attemptNumber() & 0xffff);
  }

  /** This task's map stage attempt, which picks the shuffle generation it writes. */
  private long stage() {
    return ShuffleClient.stageKey(context.stageId(), context.stageAttemptNumber());
  }

  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  public void write(Iterator<Product2<K, V>> records) {
    ShuffleDependency<K, V, ?> dep = handle.dependency();
    Partitioner partitioner = dep.partitioner();
    checksums = SparkLine.rowChecksums(dep);
    Iterator<? extends Product2<?, ?>> input = records;
    // Spark's checksum covers the records as the map produced them, before any map-side combine.
    boolean checksumWritten = checksums.enabled() && !dep.mapSideCombine();
    if (dep.mapSideCombine()) {
      Aggregator aggregator = (Aggregator) dep.aggregator().get();
      input =
          aggregator.combineValuesByKey(
              checksums.enabled() ? new Checksummed<>(records, partitioner, checksums) : records,
              context);
    }
    MapAttempt attempt = new MapAttempt(context.partitionId(), attemptId());
    pusher =
        client.newMapPusher(
            handle.lifecycle(),
            handle.engineShuffle(),
            stage(),
            attempt,
            handle.numMaps(),
            handle.numPartitions());
    SerializerInstance serializer = dep.serializer().newInstance();
    RecordSink sink =
        dep.serializer().supportsRelocationOfSerializedObjects()
            ? new ConcatenatingSink(serializer, pusher)
            : new StreamPerBatchSink(serializer, pusher);
    long count = 0;
    while (input.hasNext()) {
      Product2<?, ?> record = input.next();
      int partition = partitioner.getPartition(record._1());
      if (checksumWritten) {
        checksums.update(partition, record._1(), record._2());
      }
      sink.write(partition, record._1(), record._2());
      count++;
    }
    sink.finish();
    pusher.finish();
    lengths = pusher.partitionLengths();
    metrics.incRecordsWritten(count);
    metrics.incBytesWritten(Arrays.stream(lengths).sum());
    long mapperEndStart = System.nanoTime();
    client.mapperEnd(
        handle.lifecycle(),
        handle.engineShuffle(),
        stage(),
        attempt,
        handle.numMaps(),
        pusher.batchCounts(),
        pusher.incomplete());
    // Like Spark's: time blocked on the shuffle (waiting for pushes), not computing records.
    metrics.incWriteTime(pusher.blockedNanos() + System.nanoTime() - mapperEndStart);
    mapStatus =
        SparkLine.mapStatus(FARO_LOCATION, lengths, context.taskAttemptId(), checksums.value());
  }

  @Override
  public Option<MapStatus> stop(boolean success) {
    if (stopped) {
      return Option.empty();
    }
    stopped = true;
    if (pusher != null) {
      pusher.close();
    }
    if (!success) {
      return Option.empty();
    }
    if (mapStatus == null) {
      throw new IllegalStateException(
          "map "
              + context.partitionId()
              + " of Faro shuffle "
              + handle.engineShuffle()
              + " stopped as successful before its output was written");
    }
    return Option.apply(mapStatus);
  }

  @Override
  public long[] getPartitionLengths() {
    return lengths;
  }

  /** Passes records on, adding each to its partition's row checksum. */
  private static final class Checksummed<K, V>
      extends scala.collection.AbstractIterator<Product2<K, V>> {
    private final Iterator<Product2<K, V>> records;
    private final Partitioner partitioner;
    private final RowChecksums checksums;

    Checksummed(Iterator<Product2<K, V>> records, Partitioner partitioner, RowChecksums checksums) {
      this.records = records;
      this.partitioner = partitioner;
      this.checksums = checksums;
    }

    @Override
    public boolean hasNext() {
      return records.hasNext();
    }

    @Override
    public Product2<K, V> next() {
      Product2<K, V> record = records.next();
      checksums.update(partitioner.getPartition(record._1()), record._1(), record._2());
      return record;
    }
  }

  /** Turns records into partition bytes; cuts batches only where a reader can start decoding. */
  private abstract static class RecordSink {
    final MapPusher pusher;

    RecordSink(MapPusher pusher) {
      this.pusher = pusher;
    }

    abstract void write(int partition, Object key, Object value);

    abstract void finish();
  }

  /**
   * For serializers whose serialized records may be concatenated and read back by a fresh stream
   * (Kryo, Spark SQL's UnsafeRow): one stream serializes every record, and is flushed after each,
   * straight into the record's partition (the stream's own buffer is the only copy on the way). Any
   * record end is a batch boundary.
   */
  private static final class ConcatenatingSink extends RecordSink {
    private final DirectedOutput output;
    private final SerializationStream stream;

    ConcatenatingSink(SerializerInstance serializer, MapPusher pusher) {
      super(pusher);
      this.output = new DirectedOutput(pusher);
      this.stream = serializer.serializeStream(output);
    }

    @Override
    void write(int partition, Object key, Object value) {
      // The stream's buffer is empty here (flushed after the last record): everything it writes
      // until the flush below is this record's.
      output.partition = partition;
      stream.writeKey(key, ANY);
      stream.writeValue(value, ANY);
      stream.flush();
      output.partition = DirectedOutput.NO_RECORD;
      if (pusher.buffered(partition) >= pusher.batchSize()) {
        pusher.cut(partition);
      }
      if (pusher.overBufferLimit()) {
        pusher.cutAll();
      }
    }

    @Override
    void finish() {
      stream.close();
    }
  }

  /**
   * For serializers whose streams carry state (Java serialization writes a header and back
   * references): each partition gets its own stream, written straight into its batch, and a batch
   * is cut only after that stream is closed.
   */
  private static final class StreamPerBatchSink extends RecordSink {
    private final SerializerInstance serializer;
    private final SerializationStream[] streams;

    StreamPerBatchSink(SerializerInstance serializer, MapPusher pusher) {
      super(pusher);
      this.serializer = serializer;
      this.streams = new SerializationStream[pusher.numPartitions()];
    }

    @Override
    void write(int partition, Object key, Object value) {
      SerializationStream stream = streams[partition];
      if (stream == null) {
        stream =
            streams[partition] = serializer.serializeStream(new PartitionOutput(pusher, partition));
      }
      stream.writeKey(key, ANY);
      stream.writeValue(value, ANY);
      if (pusher.buffered(partition) >= pusher.batchSize()) {
        closeAndCut(partition);
      }
      if (pusher.overBufferLimit()) {
        finish();
      }
    }

    private void closeAndCut(int partition) {
      streams[partition].close();
      streams[partition] = null;
      pusher.cut(partition);
    }

    @Override
    void finish() {
      for (int p = 0; p < streams.length; p++) {
        if (streams[p] != null) {
          closeAndCut(p);
        }
      }
    }
  }

  /** Writes into one partition of the pusher; closing it does nothing. */
  private static final class PartitionOutput extends OutputStream {
    private final MapPusher pusher;
    private final int partition;

    PartitionOutput(MapPusher pusher, int partition) {
      this.pusher = pusher;
      this.partition = partition;
    }

    @Override
    public void write(int b) {
      pusher.write(partition, b);
    }

    @Override
    public void write(byte[] b, int off, int len) {
      pusher.write(partition, b, off, len);
    }
  }

  /**
   * Writes into the partition of the record being serialized; closing it does nothing. What a
   * stream writes outside a record (when it is made or closed) is dropped, as Spark's own writer
   * drops it (it resets its buffer before each record and never flushes the stream at the end):
   * Kryo and UnsafeRow write nothing there, and records read back by a fresh stream cannot need it.
   */
  private static final class DirectedOutput extends OutputStream {
    static final int NO_RECORD = -1;

    private final MapPusher pusher;
    private int partition = NO_RECORD;

    DirectedOutput(MapPusher pusher) {
      this.pusher = pusher;
    }

    @Override
    public void write(int b) {
      if (partition != NO_RECORD) {
        pusher.write(partition, b);
      }
    }

    @Override
    public void write(byte[] b, int off, int len) {
      if (partition != NO_RECORD) {
        pusher.write(partition, b, off, len);
      }
    }
  }
}
