package io.faro.examples;

import java.util.Iterator;
import org.apache.spark.sql.Row;

/**
 * Passes a task's rows through, sleeping {@code millis} after every {@code rows} rows: a map task
 * that pushes slowly or a reducer that reads slowly, so that a worker restarted or killed meanwhile
 * is caught in the middle.
 */
final class PauseEvery implements Iterator<Row> {
  private final Iterator<Row> input;
  private final int rows;
  private final long millis;
  private long seen;

  PauseEvery(Iterator<Row> input, int rows, long millis) {
    this.input = input;
    this.rows = rows;
    this.millis = millis;
  }

  @Override
  public boolean hasNext() {
    return input.hasNext();
  }

  @Override
  public Row next() {
    if (++seen % rows == 0) {
      try {
        Thread.sleep(millis); // the slow reader (or writer) itself
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while pausing a slow reader", e);
      }
    }
    return input.next();
  }
}
