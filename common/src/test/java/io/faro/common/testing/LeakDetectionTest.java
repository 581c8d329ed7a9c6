package io.faro.common.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtensionContext;

/** The leak check must be able to fail, or every test that relies on it proves nothing. */
class LeakDetectionTest {
  @Test
  void aDroppedBufferIsReportedAsALeak() {
    leakOneBuffer();
    ExtensionContext context =
        (ExtensionContext)
            java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(),
                new Class<?>[] {ExtensionContext.class},
                (proxy, method, args) ->
                    method.getName().equals("getDisplayName") ? "self-test" : null);
    assertThatThrownBy(
            () -> {
              // Detection needs a GC and a later allocation; each round does both.
              for (int i = 0; i < 20; i++) {
                new LeakDetection().afterAll(context);
              }
            })
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("LEAK");
    assertThat(System.getProperty("io.netty.leakDetection.level"))
        .isEqualToIgnoringCase("paranoid");
  }

  private static void leakOneBuffer() {
    ByteBuf leaked = PooledByteBufAllocator.DEFAULT.directBuffer(16);
    leaked.writeLong(1);
  }
}
