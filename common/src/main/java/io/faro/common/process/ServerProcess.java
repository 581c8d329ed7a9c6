package io.faro.common.process;

import static java.util.Objects.requireNonNull;

import io.faro.common.config.ConfigException;
import io.faro.common.config.FaroConf;
import io.faro.common.config.KnownKeys;
import io.faro.common.json.Json;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * How a Faro server process runs, the same for masters and workers: build the server from config
 * (exit {@value #EXIT_CONFIG_ERROR} with the message on a bad value), start it (exit {@value
 * #EXIT_START_FAILED} if it cannot), write the port file, then serve until the process is asked to
 * stop (SIGTERM, Ctrl-C) or {@link #stop()} is called, let the server leave (a worker's graceful
 * stop), close it, and return 0.
 *
 * <p>SIGTERM and SIGINT are handled while {@link #run} serves, instead of the JVM's default (which
 * runs the shutdown hooks and exits with 143 or 130): the caller then exits with 0, which is what
 * systemd and Ansible read as a clean stop. The previous handlers come back when {@link #run}
 * returns, so an embedding JVM (a test) keeps its own. Other ways the JVM ends (System.exit
 * elsewhere, SIGHUP) still close the server through a shutdown hook.
 */
public final class ServerProcess {
  private static final Logger LOG = LoggerFactory.getLogger(ServerProcess.class);
  public static final int EXIT_START_FAILED = 1;
  public static final int EXIT_CONFIG_ERROR = 2;

  /** The server stopped serving because it cannot go on ({@link #fail}). */
  public static final int EXIT_FAILED = 3;

  private static final Duration DEFAULT_CLOSE_WAIT = Duration.ofSeconds(60);
  private static final List<String> STOP_SIGNALS = List.of("TERM", "INT");

  private final String role;
  private volatile Duration closeWait;
  // Logged every REMIND_INTERVAL while the process serves (authentication off), or null.
  private volatile String reminder;
  private final CountDownLatch stopRequested = new CountDownLatch(1);
  private final CountDownLatch stopped = new CountDownLatch(1);
  // Why the server cannot go on, once it said so (fail), else null.
  private volatile String failure;

  public ServerProcess(String role) {
    this.role = requireNonNull(role, "role is null");
    this.closeWait = DEFAULT_CLOSE_WAIT;
  }

  /**
   * Stops a serving process because its server cannot go on (a master that met a log entry of a
   * newer release): {@link #run} closes the server, prints {@code reason} and returns {@value
   * #EXIT_FAILED}. Thread-safe.
   */
  public void fail(String reason) {
    failure = requireNonNull(reason, "reason is null");
    LOG.error("faro {}: stopping: {}", role, reason);
    stopRequested.countDown();
  }

  /** How often a process logs its {@link #remind reminder}. */
  static final Duration REMIND_INTERVAL = Duration.ofHours(1);

  /**
   * Logs {@code warning} every hour while {@link #run} serves (a member with authentication off
   * says so at start and every hour, so that nobody leaves one open by mistake). Thread-safe.
   */
  public void remind(String warning) {
    this.reminder = requireNonNull(warning, "warning is null");
  }

  /**
   * How long a shutdown hook waits for the server to leave and close before the JVM halts (60 s by
   * default; above a worker's faro.worker.graceful.timeout). Thread-safe.
   */
  public void closeWait(Duration wait) {
    this.closeWait = requireNonNull(wait, "wait is null");
  }

  /**
   * The settings of a process: the file's, then each override. A key that no Faro module declares
   * is warned about, naming where it was set and the closest known key; with
   * faro.config.strict=true it is a ConfigException instead (see {@link KnownKeys}).
   *
   * @throws ConfigException for a file that cannot be read, or unknown keys when strict
   */
  public static FaroConf configuration(Path confFile, Map<String, String> overrides) {
    return configuration(confFile, overrides, KnownKeys.loaded(), LOG);
  }

  static FaroConf configuration(
      Path confFile, Map<String, String> overrides, KnownKeys known, Logger log) {
    FaroConf file = confFile == null ? FaroConf.empty() : FaroConf.load(confFile);
    FaroConf conf = file.withAll(FaroConf.of(overrides));
    Map<String, String> sources = new TreeMap<>();
    file.asMap().keySet().forEach(k -> sources.put(k, "in " + confFile));
    overrides.keySet().forEach(k -> sources.put(k, "set with --set"));
    KnownKeys.report(known.unknown(sources), conf.get(KnownKeys.STRICT), log);
    return conf;
  }

  /**
   * Runs a server until stopped; returns the exit code.
   *
   * @param create builds the server; may throw {@link ConfigException}
   * @param describe what the port file says about the started server, besides role and pid
   * @param portFile where to write the port file once started, or null
   */
  public <S extends AutoCloseable> int run(
      Supplier<S> create,
      Consumer<S> start,
      Function<S, Map<String, Object>> describe,
      Path portFile,
      PrintWriter err) {
    return run(create, start, s -> {}, describe, portFile, err);
  }

  /**
   * As {@link #run(Supplier, Consumer, Function, Path, PrintWriter)}, with {@code leave} run when a
   * stop is asked, before the server is closed (a worker's graceful stop).
   */
  public <S extends AutoCloseable> int run(
      Supplier<S> create,
      Consumer<S> start,
      Consumer<S> leave,
      Function<S, Map<String, Object>> describe,
      Path portFile,
      PrintWriter err) {
    S server;
    try {
      server = create.get();
    } catch (ConfigException e) {
      err.println("faro " + role + ": " + e.getMessage());
      err.flush();
      return EXIT_CONFIG_ERROR;
    }
    // Before the start, which may take a while (recovery, masters that do not answer yet): a
    // SIGTERM meanwhile is a stop like any other, served once the start is done.
    Thread hook = new Thread(this::stopAndWait, "faro-" + role + "-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    Map<String, SignalHandler> previousHandlers = handleStopSignals();
    try {
      start.accept(server);
      if (portFile != null) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("role", role);
        fields.put("pid", ProcessHandle.current().pid());
        fields.putAll(describe.apply(server));
        writeAtomically(portFile, Json.write(fields));
      }
    } catch (IOException | RuntimeException e) {
      err.println("faro " + role + ": cannot start: " + e.getMessage());
      err.flush();
      closeQuietly(server, err);
      stopped.countDown();
      removeHook(hook);
      restoreSignals(previousHandlers);
      return EXIT_START_FAILED;
    }
    try {
      while (!stopRequested.await(REMIND_INTERVAL.toMillis(), TimeUnit.MILLISECONDS)) {
        String warning = reminder;
        if (warning != null) {
          LOG.warn("faro {}: {}", role, warning);
        }
      }
    } catch (InterruptedException e) {
      // Interrupted by an embedding caller (a test, a launcher thread): stop like a shutdown.
      Thread.currentThread().interrupt();
    } finally {
      try {
        leave.accept(server);
      } catch (RuntimeException e) {
        err.println("faro " + role + ": leaving failed, closing anyway: " + e);
        err.flush();
      }
      closeQuietly(server, err);
      stopped.countDown();
      removeHook(hook);
      restoreSignals(previousHandlers);
    }
    String failed = failure;
    if (failed != null) {
      err.println("faro " + role + ": stopped: " + failed);
      err.flush();
      return EXIT_FAILED;
    }
    return 0;
  }

  /**
   * Makes SIGTERM and SIGINT ask for a stop instead of ending the JVM; returns the handlers they
   * had. Where sun.misc.Signal is missing or a signal cannot be handled (the JVM was started with
   * -Xrs, say), the shutdown hook still closes the server, and the exit code is the JVM's.
   */
  private Map<String, SignalHandler> handleStopSignals() {
    Map<String, SignalHandler> previous = new LinkedHashMap<>();
    for (String name : STOP_SIGNALS) {
      try {
        Signal signal = new Signal(name);
        // Once this process has stopped, a signal goes on to the handler it replaced: two
        // servers run in one JVM (a test) may restore their handlers in any order.
        AtomicReference<SignalHandler> replaced = new AtomicReference<>();
        replaced.set(
            Signal.handle(
                signal,
                s -> {
                  if (stopped.getCount() == 0 && replaced.get() != null) {
                    replaced.get().handle(s);
                    return;
                  }
                  LOG.info("SIG{} received: stopping the {}", name, role);
                  stop();
                }));
        previous.put(name, replaced.get());
      } catch (IllegalArgumentException | LinkageError e) {
        LOG.debug("Cannot handle SIG{}: {}", name, e.toString());
      }
    }
    return previous;
  }

  private static void restoreSignals(Map<String, SignalHandler> previous) {
    previous.forEach(
        (name, handler) -> {
          try {
            Signal.handle(new Signal(name), handler);
          } catch (IllegalArgumentException | LinkageError e) {
            LOG.debug("Cannot restore the handler of SIG{}: {}", name, e.toString());
          }
        });
  }

  /** Asks a running {@link #run} to close its server and return. Thread-safe. */
  public void stop() {
    stopRequested.countDown();
  }

  private void stopAndWait() {
    stop();
    try {
      // The JVM halts when the hooks end: let run() close the server cleanly first.
      stopped.await(closeWait.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void closeQuietly(AutoCloseable server, PrintWriter err) {
    try {
      server.close();
    } catch (Exception e) {
      err.println("faro " + role + ": error while stopping: " + e);
      err.flush();
    }
  }

  private static void removeHook(Thread hook) {
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // The JVM is already shutting down: the hook is running or done.
    }
  }

  /**
   * Writes beside the target, then renames: a reader polling for the file never sees half of it.
   */
  public static void writeAtomically(Path file, String text) throws IOException {
    Path target = file.toAbsolutePath();
    Files.createDirectories(target.getParent());
    Path temp = Files.createTempFile(target.getParent(), target.getFileName().toString(), ".tmp");
    try {
      Files.writeString(temp, text, StandardCharsets.UTF_8);
      Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(temp);
    }
  }
}
