package io.faro.worker.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class when Netty's leak detector (PARANOID in the surefire argLine) reports a
 * buffer that was never released. Registered for every test class through the JUnit extension
 * auto-detection (src/test/resources). Installing the recording detector factory must happen
 * before Netty creates its detectors, which the auto-detected extension does: it is loaded
 * before any test class runs.
 */
public final class LeakDetection implements AfterAllCallback {
  private static final List<String> LEAKS = new CopyOnWriteArrayList<>();

  static {
    ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new RecordingFactory());
  }

  @Override
  public void afterAll(ExtensionContext context) {
    List<String> leaks = collect();
    assertThat(leaks).as("ByteBuf leaks reported by Netty after " + context.getDisplayName()).isEmpty();
  }

  /**
   * Lets the garbage collector find unreleased buffers, makes the detector report them, and
   * returns (and forgets) every leak reported so far.
   */
  public static List<String> collect() {
    for (int round = 0; round < 5; round++) {
      System.gc();
      // The reference handler enqueues collected buffers asynchronously; give it a moment.
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
      // The detector drains its queue when it tracks a new buffer (every one at PARANOID).
      for (int i = 0; i < 4; i++) {
        ByteBuf pooled = PooledByteBufAllocator.DEFAULT.directBuffer(16);
        pooled.release();
        ByteBuf unpooled = UnpooledByteBufAllocator.DEFAULT.heapBuffer(16);
        unpooled.release();
      }
      if (!LEAKS.isEmpty()) {
        break;
      }
    }
    List<String> leaks = new ArrayList<>(LEAKS);
    LEAKS.clear();
    return leaks;
  }

  /** Makes detectors that remember what they report. */
  private static final class RecordingFactory extends ResourceLeakDetectorFactory {
    @Override
    @SuppressWarnings("deprecation")
    public <T> ResourceLeakDetector<T> newResourceLeakDetector(
        Class<T> resource, int samplingInterval, long maxActive) {
      return new RecordingDetector<>(resource, samplingInterval);
    }
  }

  private static final class RecordingDetector<T> extends ResourceLeakDetector<T> {
    RecordingDetector(Class<?> resourceType, int samplingInterval) {
      super(resourceType, samplingInterval);
    }

    @Override
    protected void reportTracedLeak(String resourceType, String records) {
      LEAKS.add(resourceType + " leaked:" + records);
      super.reportTracedLeak(resourceType, records);
    }

    @Override
    protected void reportUntracedLeak(String resourceType) {
      LEAKS.add(resourceType + " leaked (untraced)");
      super.reportUntracedLeak(resourceType);
    }
  }
}
