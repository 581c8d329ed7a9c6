package io.faro.worker.extension;

import static java.util.Objects.requireNonNull;

import io.faro.common.config.FaroConf;
import io.faro.common.network.RequestHandler;
import io.faro.worker.storage.Disk;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link WorkerExtension}s of one worker, configured, and how the worker applies them: their
 * wrappers around the push and fetch handlers (the first loaded innermost) and their disk delays
 * (added up). With none, the usual case, nothing is wrapped and no disk asks anything. Immutable.
 */
public final class WorkerExtensions {
  private static final Logger LOG = LoggerFactory.getLogger(WorkerExtensions.class);
  private static final WorkerExtensions NONE = new WorkerExtensions(List.of());

  private final List<WorkerExtension> extensions;

  private WorkerExtensions(List<WorkerExtension> extensions) {
    this.extensions = List.copyOf(extensions);
  }

  /** No extensions. */
  public static WorkerExtensions none() {
    return NONE;
  }

  /** {@code extensions}, configured already, in the order they apply. */
  public static WorkerExtensions of(List<? extends WorkerExtension> extensions) {
    return extensions.isEmpty() ? NONE : new WorkerExtensions(List.copyOf(extensions));
  }

  /**
   * Every extension on the class path (found with {@link ServiceLoader} through the loader of
   * {@link WorkerExtension}), each a new instance configured with {@code conf}.
   *
   * @throws io.faro.common.config.ConfigException when an extension refuses its keys
   * @throws java.util.ServiceConfigurationError when a listed extension cannot be made
   */
  public static WorkerExtensions load(FaroConf conf) {
    requireNonNull(conf, "conf is null");
    List<WorkerExtension> loaded = new ArrayList<>();
    for (WorkerExtension extension :
        ServiceLoader.load(WorkerExtension.class, WorkerExtension.class.getClassLoader())) {
      extension.configure(conf);
      loaded.add(extension);
    }
    return of(loaded);
  }

  /** The extensions, in the order they were loaded. */
  public List<WorkerExtension> all() {
    return extensions;
  }

  /**
   * The warning a worker logs at start when it loaded any extension: each by class, with what it
   * does. Empty without extensions.
   */
  public Optional<String> warning() {
    if (extensions.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(
        "Worker extensions loaded from the class path, for tests only "
            + "(io.faro.worker.extension.WorkerExtension; never in a production worker): "
            + extensions.stream()
                .map(e -> e.getClass().getName() + " (" + e.describe() + ")")
                .collect(Collectors.joining("; ")));
  }

  /** The push port's handler, wrapped by every extension. */
  public RequestHandler wrapPush(RequestHandler push) {
    RequestHandler handler = requireNonNull(push, "push is null");
    for (WorkerExtension extension : extensions) {
      handler = requireNonNull(extension.wrapPush(handler), "wrapped push handler is null");
    }
    return handler;
  }

  /** The fetch port's handler, wrapped by every extension. */
  public RequestHandler wrapFetch(RequestHandler fetch) {
    RequestHandler handler = requireNonNull(fetch, "fetch is null");
    for (WorkerExtension extension : extensions) {
      handler = requireNonNull(extension.wrapFetch(handler), "wrapped fetch handler is null");
    }
    return handler;
  }

  /**
   * Has {@code disk} ask the extensions at each of its checks how much longer its writes take;
   * without extensions, leaves it alone (it then asks nothing).
   */
  public void attach(Disk disk) {
    if (!extensions.isEmpty()) {
      disk.writeDelay(() -> writeDelayNanosPerMiB(disk));
    }
  }

  /**
   * The extensions' delays for {@code disk}, added up, in nanoseconds per MiB. An extension that
   * fails or answers a negative delay is logged and adds nothing: a disk check must go on.
   */
  private long writeDelayNanosPerMiB(Disk disk) {
    long total = 0;
    for (WorkerExtension extension : extensions) {
      try {
        Duration delay = extension.diskWriteDelayPerMiB(disk.dir());
        if (delay == null || delay.isNegative()) {
          LOG.warn(
              "Worker extension {} answered a write delay of {} for {}: none applied",
              extension.getClass().getName(),
              delay,
              disk);
          continue;
        }
        total = saturatedAdd(total, delay.toNanos());
      } catch (RuntimeException e) {
        LOG.warn(
            "Worker extension {} failed to tell the write delay of {}: none applied",
            extension.getClass().getName(),
            disk,
            e);
      }
    }
    return total;
  }

  private static long saturatedAdd(long a, long b) {
    long sum = a + b;
    return sum < 0 ? Long.MAX_VALUE : sum;
  }
}
