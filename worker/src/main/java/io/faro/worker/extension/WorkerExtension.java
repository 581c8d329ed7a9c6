package io.faro.worker.extension;

import io.faro.common.config.FaroConf;
import io.faro.common.network.RequestHandler;
import io.faro.worker.storage.DiskDir;
import java.time.Duration;

/**
 * A hook into a worker for what tests do to a real worker and production never does: wrap its push
 * and fetch handlers (to drop connections, say) and slow its disks' writes down. Faro's own is the
 * fault injection of the faro-testing module, which only tests put on a class path.
 *
 * <p>Found with {@link java.util.ServiceLoader} when a worker is built from its configuration
 * ({@code new WorkerServer(conf)}): a jar on the worker's class path lists its implementations in
 * {@code META-INF/services/io.faro.worker.extension.WorkerExtension}. Faro's distribution ships
 * none, so a production worker loads nothing, wraps nothing and asks nothing; a worker that loaded
 * some says so in a warning at start, naming each and what it does ({@link #describe}).
 *
 * <p>An implementation is a public class with a public no-argument constructor. Each worker gets
 * instances of its own, configured once with {@link #configure} before any other call (tests run
 * several workers in one JVM). It reads keys of its own, which it declares in a {@link
 * io.faro.common.config.ConfigOptionGroup} of its jar under a namespace listed in {@link
 * io.faro.common.config.KnownKeys#MODULE_NAMESPACES}: strict config then knows them where the jar
 * is loaded and lets them through where it is not.
 */
public interface WorkerExtension {
  /**
   * Reads this extension's keys from the worker's configuration. Called once, when the worker is
   * built.
   *
   * @throws io.faro.common.config.ConfigException naming the key at fault
   */
  void configure(FaroConf conf);

  /**
   * What this extension does to the worker as configured, in a few words with the keys that say so,
   * for the warning the worker logs at start.
   */
  String describe();

  /**
   * The handler of the push port: {@code push} itself (the default) or a handler around it. Called
   * once, at start.
   */
  default RequestHandler wrapPush(RequestHandler push) {
    return push;
  }

  /**
   * The handler of the fetch port: {@code fetch} itself (the default) or a handler around it.
   * Called once, at start.
   */
  default RequestHandler wrapFetch(RequestHandler fetch) {
    return fetch;
  }

  /**
   * How much longer each MiB written to the disk {@code disk} takes from now on: zero (the default)
   * for no delay. Asked at each check of the disk (every faro.worker.disk.check.interval, on the
   * disk's checker thread, where looking at a file is fine), never on the write path.
   */
  default Duration diskWriteDelayPerMiB(DiskDir disk) {
    return Duration.ZERO;
  }
}
