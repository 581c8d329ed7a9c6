package io.faro.spark;

import io.faro.client.ReadRange;
import io.faro.client.ShuffleClient;
import io.faro.client.fetch.PartitionReader;
import io.faro.common.batch.Batch;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.ShuffleId;
import java.io.ByteArrayInputStream;
import java.util.NoSuchElementException;
import org.apache.spark.Aggregator;
import org.apache.spark.InterruptibleIterator;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.TaskContext;
import org.apache.spark.serializer.SerializerInstance;
import org.apache.spark.shuffle.FetchFailedException;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.util.CompletionIterator$;
import org.apache.spark.util.TaskCompletionListener;
import org.apache.spark.util.collection.ExternalSorter;
import scala.Product2;
import scala.Tuple2;
import scala.collection.AbstractIterator;
import scala.collection.Iterator;
import scala.math.Ordering;
import scala.runtime.AbstractFunction0;
import scala.runtime.BoxedUnit;

/**
 * Reads partitions {@code [startPartition, endPartition)} of maps {@code [startMap, endMap)} (a
 * {@link ReadRange}) from Faro workers, then aggregates and sorts as the dependency asks, exactly
 * as Spark's own reader does after fetching blocks.
 */
final class FaroShuffleReader<K, C> implements ShuffleReader<K, C> {
  private final FaroShuffleHandle<K, ?, C> handle;
  private final ReadRange range;
  private final TaskContext context;
  private final ShuffleReadMetricsReporter metrics;
  private final ShuffleClient client;

  FaroShuffleReader(
      FaroShuffleHandle<K, ?, C> handle,
      ReadRange range,
      TaskContext context,
      ShuffleReadMetricsReporter metrics,
      ShuffleClient client) {
    this.handle = handle;
    this.range = range;
    this.context = context;
    this.metrics = metrics;
    this.client = client;
  }

  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  public Iterator<Product2<K, C>> read() {
    long waitStart = System.nanoTime();
    // A stage re-run after lost data asks again, and reads the shuffle's new generation.
    long readerStage = ShuffleClient.stageKey(context.stageId(), context.stageAttemptNumber());
    PartitionReader reader;
    try {
      reader =
          client.newReader(
              handle.lifecycle(), handle.engineShuffle(), handle.numMaps(), range, readerStage);
    } catch (FaroException e) {
      throw fetchFailed(e, null, range.startPartition());
    }
    metrics.incFetchWaitTime((System.nanoTime() - waitStart) / 1_000_000);
    context.addTaskCompletionListener(
        new TaskCompletionListener() {
          @Override
          public void onTaskCompletion(TaskContext ctx) {
            reader.close();
          }
        });
    ShuffleDependency<K, ?, C> dep = handle.dependency();
    Iterator records =
        CompletionIterator$.MODULE$.apply(
            new RecordIterator(reader, dep.serializer().newInstance(), metrics, this),
            new AbstractFunction0<BoxedUnit>() {
              @Override
              public BoxedUnit apply() {
                reader.close();
                // As Spark's own reader does: fold this read's metrics into the task's now, not at
                // the next executor heartbeat.
                context.taskMetrics().mergeShuffleReadMetrics();
                return BoxedUnit.UNIT;
              }
            });
    Iterator interruptible = new InterruptibleIterator(context, records);

    Iterator aggregated = interruptible;
    if (dep.aggregator().isDefined()) {
      Aggregator aggregator = (Aggregator) dep.aggregator().get();
      aggregated =
          dep.mapSideCombine()
              ? aggregator.combineCombinersByKey(interruptible, context)
              : aggregator.combineValuesByKey(interruptible, context);
    }
    if (dep.keyOrdering().isDefined()) {
      ExternalSorter sorter =
          SparkLine.sorter(context, (Ordering) dep.keyOrdering().get(), dep.serializer());
      return sorter.insertAllAndUpdateMetrics(aggregated);
    }
    return aggregated;
  }

  /**
   * Turns lost data into Spark's fetch failure, after the driver had Spark forget the shuffle's map
   * outputs: Spark then re-runs the map stage, which writes a new generation. Any other error is
   * returned as it is (the task fails and Spark retries it).
   */
  RuntimeException fetchFailed(FaroException e, PartitionReader reader, int partition) {
    if (e.code() != ErrorCode.DATA_LOST) {
      return e;
    }
    int lostPartition =
        reader != null && reader.currentPartition() >= 0 ? reader.currentPartition() : partition;
    try {
      ShuffleId generation =
          reader != null
              ? reader.shuffle()
              : client
                  .fileGroups(
                      handle.lifecycle(),
                      handle.engineShuffle(),
                      handle.numMaps(),
                      ShuffleClient.stageKey(context.stageId(), context.stageAttemptNumber()),
                      partition,
                      partition + 1)
                  .faroShuffle();
      client.reportLost(handle.lifecycle(), generation, lostPartition, e.getMessage());
    } catch (RuntimeException report) {
      e.addSuppressed(report);
      return e; // without the driver's help, a fetch failure would re-run nothing useful
    }
    return Sneaky.rethrow(
        new FetchFailedException(
            null, handle.shuffleId(), -1L, -1, lostPartition, "Faro: " + e.getMessage(), e));
  }

  /**
   * The records of the kept batches, one batch at a time: a batch's array is valid until the next
   * batch is fetched, which happens only once its records are exhausted.
   */
  private static final class RecordIterator extends AbstractIterator<Product2<Object, Object>> {
    private final PartitionReader reader;
    private final SerializerInstance serializer;
    private final ShuffleReadMetricsReporter metrics;
    private final FaroShuffleReader<?, ?> owner;
    private Iterator<Tuple2<Object, Object>> current;

    RecordIterator(
        PartitionReader reader,
        SerializerInstance serializer,
        ShuffleReadMetricsReporter metrics,
        FaroShuffleReader<?, ?> owner) {
      this.reader = reader;
      this.serializer = serializer;
      this.metrics = metrics;
      this.owner = owner;
    }

    private long reportedBytes;
    private long reportedChunks;
    private long reportedWaitMillis;

    @Override
    public boolean hasNext() {
      while (current == null || !current.hasNext()) {
        Batch batch;
        try {
          batch = reader.next();
        } catch (FaroException e) {
          throw owner.fetchFailed(e, reader, owner.range.startPartition());
        }
        reportProgress();
        if (batch == null) {
          return false;
        }
        // Exhausting the iterator closes the stream (returning e.g. a pooled Kryo).
        current =
            serializer
                .deserializeStream(new ByteArrayInputStream(batch.data(), 0, batch.length()))
                .asKeyValueIterator();
      }
      return true;
    }

    /** Reports what was fetched since the last call, so a task that stops early still counts it. */
    private void reportProgress() {
      metrics.incRemoteBytesRead(reader.bytesRead() - reportedBytes);
      metrics.incRemoteBlocksFetched(reader.chunksRead() - reportedChunks);
      long waitMillis = reader.waitNanos() / 1_000_000;
      metrics.incFetchWaitTime(waitMillis - reportedWaitMillis);
      reportedBytes = reader.bytesRead();
      reportedChunks = reader.chunksRead();
      reportedWaitMillis = waitMillis;
    }

    @Override
    public Product2<Object, Object> next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      metrics.incRecordsRead(1);
      return current.next();
    }
  }
}
