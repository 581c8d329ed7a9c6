package io.faro.examples;

import java.util.Iterator;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.Row;

/**
 * Passes a task's rows through; on the first attempt of every third task, fails once they are all
 * read, so that the task is retried after it has pushed all its rows. Makes the flaky job's failed
 * map attempts.
 */
final class FailAtEndOfFirstAttempt implements Iterator<Row> {
  private final Iterator<Row> input;
  private final boolean fail;

  FailAtEndOfFirstAttempt(Iterator<Row> input) {
    this.input = input;
    TaskContext context = TaskContext.get();
    this.fail =
        context.attemptNumber() == 0
            && context.stageAttemptNumber() == 0
            && context.partitionId() % 3 == 0;
  }

  @Override
  public boolean hasNext() {
    boolean more = input.hasNext();
    if (!more && fail) {
      throw new IllegalStateException(
          "flaky job: the first attempt of this map task fails after its last row");
    }
    return more;
  }

  @Override
  public Row next() {
    return input.next();
  }
}
