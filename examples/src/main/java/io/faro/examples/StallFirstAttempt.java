package io.faro.examples;

import java.util.Iterator;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.Row;

/**
 * Passes a task's rows through; with speculation on, the first attempt of every fourth task stops
 * after {@code after} rows until it is killed (Spark interrupts it once a copy has succeeded) or a
 * minute has passed. Makes the stragglers of the slow job.
 */
final class StallFirstAttempt implements Iterator<Row> {
  private static final long STALL_MILLIS = 60_000;
  private final Iterator<Row> input;
  private long untilStall;

  StallFirstAttempt(Iterator<Row> input, long after) {
    this.input = input;
    TaskContext context = TaskContext.get();
    boolean stall =
        context.attemptNumber() == 0
            && context.stageAttemptNumber() == 0
            && context.partitionId() % 4 == 1
            && SparkEnv.get().conf().getBoolean("spark.speculation", false);
    this.untilStall = stall ? after : -1;
  }

  @Override
  public boolean hasNext() {
    return input.hasNext();
  }

  @Override
  public Row next() {
    if (untilStall >= 0 && untilStall-- == 0) {
      try {
        Thread.sleep(STALL_MILLIS); // the straggler itself: Spark's kill interrupts it
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("slow job: the stalled attempt was killed", e);
      }
    }
    return input.next();
  }
}
