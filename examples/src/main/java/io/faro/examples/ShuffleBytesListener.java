package io.faro.examples;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.scheduler.SparkListenerJobEnd;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.SparkListenerTaskStart;

/**
 * Adds up the shuffle bytes every task reports, as Spark's UI would show them. Whatever shuffle
 * manager runs, these are the numbers it gave Spark's metrics reporters.
 *
 * <p>Spark delivers listener events on its listener-bus thread, after the action that caused them
 * may have returned. The DAG scheduler posts a task's end before the end of its job, so once the
 * end of every job of the action has arrived, the totals are complete: {@link #awaitJobs} waits for
 * that. Fields are written on the listener-bus thread and read by the caller, under {@code lock}.
 */
final class ShuffleBytesListener extends SparkListener {
  /** What the tasks of the finished jobs reported. */
  record Totals(
      long writeBytes,
      long writeRecords,
      long readBytes,
      long fetchWaitMillis,
      long writeTimeNanos,
      int stageRetries,
      int failedTasks,
      int speculativeTasks,
      int executorsRemoved) {}

  private final Object lock = new Object();
  private final Set<Integer> started = new HashSet<>();
  private final Set<Integer> ended = new HashSet<>();
  private long writeBytes;
  private long writeRecords;
  private long readBytes;
  private long fetchWaitMillis;
  private long writeTimeNanos;
  private int stageRetries;
  private int failedTasks;
  private int speculativeTasks;
  private int executorsRemoved;

  @Override
  public void onExecutorRemoved(SparkListenerExecutorRemoved event) {
    synchronized (lock) {
      executorsRemoved++;
    }
  }

  @Override
  public void onStageSubmitted(SparkListenerStageSubmitted event) {
    synchronized (lock) {
      if (event.stageInfo().attemptNumber() > 0) {
        stageRetries++;
      }
    }
  }

  @Override
  public void onJobStart(SparkListenerJobStart event) {
    synchronized (lock) {
      started.add(event.jobId());
    }
  }

  @Override
  public void onTaskStart(SparkListenerTaskStart event) {
    if (event.taskInfo().speculative()) {
      synchronized (lock) {
        speculativeTasks++;
      }
    }
  }

  @Override
  public void onTaskEnd(SparkListenerTaskEnd event) {
    if (!(event.reason() instanceof org.apache.spark.Success$)) {
      synchronized (lock) {
        failedTasks++;
      }
    }
    TaskMetrics metrics = event.taskMetrics();
    if (metrics == null) {
      return;
    }
    synchronized (lock) {
      writeBytes += metrics.shuffleWriteMetrics().bytesWritten();
      writeRecords += metrics.shuffleWriteMetrics().recordsWritten();
      readBytes += metrics.shuffleReadMetrics().totalBytesRead();
      fetchWaitMillis += metrics.shuffleReadMetrics().fetchWaitTime();
      writeTimeNanos += metrics.shuffleWriteMetrics().writeTime();
    }
  }

  @Override
  public void onJobEnd(SparkListenerJobEnd event) {
    synchronized (lock) {
      ended.add(event.jobId());
      lock.notifyAll();
    }
  }

  /**
   * Waits until the listener has seen the end of each of {@code jobIds} (the jobs the action ran,
   * from Spark's status tracker) and of every job it saw start, then returns the totals.
   */
  Totals awaitJobs(List<Integer> jobIds, long timeout, TimeUnit unit)
      throws InterruptedException, TimeoutException {
    long deadline = System.nanoTime() + unit.toNanos(timeout);
    synchronized (lock) {
      while (!ended.containsAll(jobIds) || !ended.containsAll(started)) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new TimeoutException(
              "Spark's listener bus did not deliver the end of jobs "
                  + jobIds
                  + " within "
                  + timeout
                  + " "
                  + unit
                  + " (ended: "
                  + ended
                  + ")");
        }
        TimeUnit.NANOSECONDS.timedWait(lock, left);
      }
      return new Totals(
          writeBytes,
          writeRecords,
          readBytes,
          fetchWaitMillis,
          writeTimeNanos,
          stageRetries,
          failedTasks,
          speculativeTasks,
          executorsRemoved);
    }
  }
}
