package io.faro.common.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * Makes a Netty buffer leak fail the test class that caused it. The launcher listener installs a
 * leak-detector factory that records every leak report before any buffer class initialises (tests
 * run at {@code -Dio.netty.leakDetection.level=PARANOID}); the extension, registered for every test
 * class by auto-detection, collects garbage after the class, provokes the detectors to report, and
 * fails with the leak records.
 *
 * <p>The recorded leaks are static because the detectors are process-wide, as Netty's are.
 */
public final class LeakDetection implements LauncherSessionListener, AfterAllCallback {
  private static final List<String> LEAKS = new ArrayList<>();

  @Override
  public void launcherSessionOpened(LauncherSession session) {
    install();
  }

  static synchronized void install() {
    ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new RecordingFactory());
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    for (int i = 0; i < 3; i++) {
      System.gc();
      System.runFinalization();
      // Detectors look at their reference queues when a tracked object is created.
      ByteBuf pooled = PooledByteBufAllocator.DEFAULT.directBuffer(1);
      pooled.release();
      ByteBuf unpooled = UnpooledByteBufAllocator.DEFAULT.directBuffer(1);
      unpooled.release();
    }
    List<String> leaks;
    synchronized (LEAKS) {
      leaks = new ArrayList<>(LEAKS);
      LEAKS.clear();
    }
    if (!leaks.isEmpty()) {
      throw new AssertionError(
          "Netty buffer leak(s) in or before "
              + context.getDisplayName()
              + ":\n"
              + String.join("\n----\n", leaks));
    }
  }

  private static final class RecordingFactory extends ResourceLeakDetectorFactory {
    @Override
    @SuppressWarnings("deprecation")
    public <T> ResourceLeakDetector<T> newResourceLeakDetector(
        Class<T> resource, int samplingInterval, long maxActive) {
      return new ResourceLeakDetector<T>(resource, samplingInterval) {
        @Override
        protected void reportTracedLeak(String resourceType, String records) {
          record("LEAK: " + resourceType + "\n" + records);
        }

        @Override
        protected void reportUntracedLeak(String resourceType) {
          record("LEAK (untraced): " + resourceType);
        }
      };
    }

    private static void record(String leak) {
      synchronized (LEAKS) {
        LEAKS.add(leak);
      }
    }
  }
}
