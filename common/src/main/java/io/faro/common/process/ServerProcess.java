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
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a Faro server process runs, the same for masters and workers: build the server from config
 * (exit {@value #EXIT_CONFIG_ERROR} with the message on a bad value), start it (exit {@value
 * #EXIT_START_FAILED} if it cannot), write the port file, then serve until the JVM is asked to stop
 * (SIGTERM, Ctrl-C) or {@link #stop()} is called, and close the server before the JVM exits (exit
 * 0).
 */
public final class ServerProcess {
  private static final Logger LOG = LoggerFactory.getLogger(ServerProcess.class);
  public static final int EXIT_START_FAILED = 1;
  public static final int EXIT_CONFIG_ERROR = 2;
  private static final long CLOSE_WAIT_SECONDS = 60;

  private final String role;
  private final CountDownLatch stopRequested = new CountDownLatch(1);
  private final CountDownLatch stopped = new CountDownLatch(1);

  public ServerProcess(String role) {
    this.role = requireNonNull(role, "role is null");
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
    S server;
    try {
      server = create.get();
    } catch (ConfigException e) {
      err.println("faro " + role + ": " + e.getMessage());
      err.flush();
      return EXIT_CONFIG_ERROR;
    }
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
      return EXIT_START_FAILED;
    }
    Thread hook = new Thread(this::stopAndWait, "faro-" + role + "-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      stopRequested.await();
    } catch (InterruptedException e) {
      // Interrupted by an embedding caller (a test, a launcher thread): stop like a shutdown.
      Thread.currentThread().interrupt();
    } finally {
      closeQuietly(server, err);
      stopped.countDown();
      removeHook(hook);
    }
    return 0;
  }

  /** Asks a running {@link #run} to close its server and return. Thread-safe. */
  public void stop() {
    stopRequested.countDown();
  }

  private void stopAndWait() {
    stop();
    try {
      // The JVM halts when the hooks end: let run() close the server cleanly first.
      stopped.await(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS);
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
