package io.faro.worker.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Proves that the leak check of every test class can fail: a dropped buffer is reported. */
class LeakDetectionSelfTest {
  @Test
  void reportsABufferThatWasNeverReleased() {
    LeakDetection.collect();
    leakOneBuffer();
    List<String> leaks = LeakDetection.collect();
    assertThat(leaks).isNotEmpty();
    assertThat(leaks.get(0)).contains("ByteBuf");
  }

  private static void leakOneBuffer() {
    ByteBuf buffer = PooledByteBufAllocator.DEFAULT.directBuffer(64);
    buffer.writeLong(42);
    // No release: the buffer becomes garbage while its count is 1.
  }
}
