package io.faro.worker.extension;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.config.FaroConf;
import io.faro.common.network.RequestHandler;
import io.faro.worker.storage.Disk;
import io.faro.worker.storage.DiskDir;
import io.faro.worker.storage.Disks;
import io.faro.worker.testing.TestDisks;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How a worker applies its extensions: none on the worker's own class path (so production wraps and
 * asks nothing), wrappers in the order loaded, disk delays added up at each check, on real disk
 * directories.
 */
class WorkerExtensionsTest {
  private static final long MIB = 1 << 20;

  @TempDir Path root;
  private Disks disks;

  @AfterEach
  void tearDown() {
    if (disks != null) {
      disks.close();
    }
  }

  @Test
  void theWorkersOwnClassPathHasNoExtensions() {
    WorkerExtensions loaded = WorkerExtensions.load(FaroConf.of(Map.of()));
    RequestHandler push = (request, responder) -> {};
    RequestHandler fetch = (request, responder) -> {};

    assertThat(loaded.all()).isEmpty();
    assertThat(loaded.warning()).isEmpty();
    assertThat(loaded.wrapPush(push)).isSameAs(push);
    assertThat(loaded.wrapFetch(fetch)).isSameAs(fetch);
  }

  @Test
  void withoutExtensionsADiskIsNeitherAskedNorSlowed() {
    disks = TestDisks.ssds(root, 1);
    Disk disk = disks.get(0);
    WorkerExtensions.none().attach(disk);
    disk.check(0);

    disk.accounting().wrote(4 * MIB, 0);

    assertThat(disk.ioTimes()[1]).as("write nanos of 4 MiB written in no time").isZero();
  }

  @Test
  void handlersAreWrappedInTheOrderTheExtensionsCame() {
    List<String> calls = new ArrayList<>();
    WorkerExtensions extensions =
        WorkerExtensions.of(
            List.of(
                new Recording("first", calls, Duration.ZERO),
                new Recording("second", calls, Duration.ZERO)));
    RequestHandler push = (request, responder) -> calls.add("push");
    RequestHandler fetch = (request, responder) -> calls.add("fetch");

    extensions.wrapPush(push).handle(null, null);
    extensions.wrapFetch(fetch).handle(null, null);

    assertThat(calls)
        .containsExactly(
            "second push", "first push", "push", "second fetch", "first fetch", "fetch");
    assertThat(extensions.warning())
        .hasValueSatisfying(
            w ->
                assertThat(w)
                    .contains(Recording.class.getName() + " (records first)")
                    .contains(Recording.class.getName() + " (records second)"));
  }

  @Test
  void aDiskTakesTheSumOfTheDelaysAskedForAtItsLastCheck() {
    disks = TestDisks.ssds(root, 2);
    Disk slowed = disks.get(0);
    Disk other = disks.get(1);
    List<String> calls = new ArrayList<>();
    WorkerExtensions extensions =
        WorkerExtensions.of(
            List.of(
                new Recording("a", calls, Duration.ofMillis(20)),
                new Recording("b", calls, Duration.ofMillis(10)),
                // Neither a negative delay nor a failure may stop a disk check: both add nothing.
                new Recording("negative", calls, Duration.ofMillis(-5)),
                new Recording("failing", calls, null)));
    extensions.attach(slowed);

    slowed.accounting().wrote(MIB, 0);
    assertThat(slowed.ioTimes()[1]).as("before a check, nothing was asked").isZero();
    assertThat(calls).isEmpty();

    slowed.check(0);
    other.check(0);
    slowed.accounting().wrote(2 * MIB, 0);
    other.accounting().wrote(2 * MIB, 0);

    assertThat(calls).containsExactly("a delay", "b delay", "negative delay", "failing delay");
    assertThat(slowed.ioTimes()[1])
        .as("2 MiB at 20 + 10 ms per MiB")
        .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(60));
    assertThat(other.ioTimes()[1]).as("a disk not attached").isZero();
  }

  /**
   * Records each call, and each call of the handlers it wraps; slows every disk it is asked about
   * by {@code delay} (null: fails).
   */
  private static final class Recording implements WorkerExtension {
    private final String name;
    private final List<String> calls;
    private final Duration delay;

    Recording(String name, List<String> calls, Duration delay) {
      this.name = name;
      this.calls = calls;
      this.delay = delay;
    }

    @Override
    public void configure(FaroConf conf) {}

    @Override
    public String describe() {
      return "records " + name;
    }

    @Override
    public RequestHandler wrapPush(RequestHandler push) {
      return wrap(push, "push");
    }

    @Override
    public RequestHandler wrapFetch(RequestHandler fetch) {
      return wrap(fetch, "fetch");
    }

    private RequestHandler wrap(RequestHandler handler, String port) {
      String call = name + " " + port;
      return (request, responder) -> {
        calls.add(call);
        handler.handle(request, responder);
      };
    }

    @Override
    public Duration diskWriteDelayPerMiB(DiskDir disk) {
      calls.add(name + " delay");
      if (delay == null) {
        throw new IllegalStateException("no delay today");
      }
      return delay;
    }
  }
}
