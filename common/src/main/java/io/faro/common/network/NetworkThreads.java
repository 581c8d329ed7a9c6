package io.faro.common.network;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.FastThreadLocalThread;
import java.util.concurrent.ThreadFactory;

/**
 * The event-loop threads of Faro's servers and client pools, told apart from every other thread:
 * they decode, validate, enqueue and answer, and never touch a file or a store. Code that does
 * (disk reads, metadata writes) asserts it is not on one ({@code assert
 * !NetworkThreads.isCurrent()}; the tests run with assertions on), and a test records file I/O per
 * thread with JFR to check the same for the JDK's file channels.
 */
public final class NetworkThreads {
  private NetworkThreads() {}

  /** Marks an event-loop thread. */
  private static final class NetworkThread extends FastThreadLocalThread {
    NetworkThread(ThreadGroup group, Runnable target, String name) {
      super(group, target, name);
    }
  }

  /** Daemon event-loop threads named {@code <prefix>-N}, each one a network thread. */
  public static ThreadFactory factory(String prefix) {
    return new DefaultThreadFactory(prefix, true) {
      @Override
      protected Thread newThread(Runnable r, String name) {
        return new NetworkThread(threadGroup, r, name);
      }
    };
  }

  /** Whether the calling thread is an event loop of a Faro server or client pool. */
  public static boolean isCurrent() {
    return Thread.currentThread() instanceof NetworkThread;
  }
}
