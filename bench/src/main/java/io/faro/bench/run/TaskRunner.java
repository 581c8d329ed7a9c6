package io.faro.bench.run;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionService;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs a phase's tasks on a bounded pool of named threads and waits for all of them, failing on the
 * first task that fails or when the deadline passes; either way the other tasks are interrupted and
 * the threads stop.
 */
final class TaskRunner {
  private TaskRunner() {}

  /** Runs one blocking call under the deadline: {@link #runAll} of one task. */
  static <T> T runOne(String phase, Callable<T> task, long deadlineNanos) {
    return runAll(phase, 1, List.of(task), deadlineNanos).get(0);
  }

  /**
   * @param deadlineNanos the {@link System#nanoTime()} by which every task must be done
   * @throws RunFailedException naming the phase and the first failure
   */
  static <T> List<T> runAll(
      String phase, int threads, List<? extends Callable<T>> tasks, long deadlineNanos) {
    AtomicInteger counter = new AtomicInteger();
    ExecutorService pool =
        Executors.newFixedThreadPool(
            threads,
            r -> {
              Thread t = new Thread(r, "faro-bench-" + phase + "-" + counter.getAndIncrement());
              t.setDaemon(true);
              return t;
            });
    try {
      CompletionService<T> completion = new ExecutorCompletionService<>(pool);
      List<Future<T>> submitted = new ArrayList<>();
      for (Callable<T> task : tasks) {
        submitted.add(completion.submit(task));
      }
      for (int i = 0; i < submitted.size(); i++) {
        Future<T> done =
            completion.poll(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (done == null) {
          throw new RunFailedException(
              phase + " did not finish within the run's time limit (--timeout)", null);
        }
        done.get();
      }
      List<T> results = new ArrayList<>();
      for (Future<T> f : submitted) {
        results.add(f.get()); // all done: in submission order
      }
      return results;
    } catch (ExecutionException e) {
      throw new RunFailedException(phase + " failed: " + e.getCause().getMessage(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RunFailedException(phase + " was interrupted", e);
    } finally {
      pool.shutdownNow();
    }
  }
}
