package io.faro.examples;

import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.SparkSession;

/**
 * Waits on the driver until dynamic allocation has removed every executor, for the released job's
 * second read of its shuffle; without dynamic allocation it does not wait. Tells how many executors
 * were left when it stopped.
 */
final class ExecutorWait {
  private ExecutorWait() {}

  /**
   * Executors left when it stopped waiting (the driver not counted).
   *
   * @param waitKey the Spark setting of the longest wait, in seconds (default 60)
   */
  static int awaitNoExecutors(SparkSession spark, String waitKey) {
    if (!spark.sparkContext().getConf().getBoolean("spark.dynamicAllocation.enabled", false)) {
      return spark.sparkContext().statusTracker().getExecutorInfos().length - 1;
    }
    long deadline =
        System.nanoTime()
            + TimeUnit.SECONDS.toNanos(spark.sparkContext().getConf().getLong(waitKey, 60));
    // The status tracker lists the driver too.
    while (spark.sparkContext().statusTracker().getExecutorInfos().length > 1
        && System.nanoTime() < deadline) {
      try {
        // Spark tells of removed executors only on its listener bus, which this job's driver
        // thread does not wait on: poll its status tracker, bounded by the deadline above.
        Thread.sleep(200);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for executors to go", e);
      }
    }
    return spark.sparkContext().statusTracker().getExecutorInfos().length - 1;
  }
}
