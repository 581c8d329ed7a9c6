package io.faro.common.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * The test suite's blocking-call detector: records every file read, write and force of this JVM
 * with JFR (the JDK's own instrumentation of FileChannel, RandomAccessFile and the file streams,
 * threshold 0) while a test runs, and fails when one ran on a Netty event loop of a Faro server or
 * client pool (a thread named {@code <name>-io-<pool>-<n>}, see {@code NetworkThreads}). Native
 * writes (RocksDB's) are not seen here: the metadata store asserts its thread instead.
 */
public final class EventLoopFileIo implements AutoCloseable {
  private static final Pattern EVENT_LOOP = Pattern.compile(".*-io-\\d+-\\d+");
  private static final List<String> EVENTS =
      List.of("jdk.FileRead", "jdk.FileWrite", "jdk.FileForce");

  private final Recording recording = new Recording();
  private List<RecordedEvent> events;

  private EventLoopFileIo() {
    for (String event : EVENTS) {
      recording.enable(event).withThreshold(Duration.ZERO).withStackTrace();
    }
    recording.start();
  }

  /** Starts recording the file I/O of every thread of this JVM. */
  public static EventLoopFileIo record() {
    return new EventLoopFileIo();
  }

  /** Stops recording (once) and returns what was recorded. */
  public List<RecordedEvent> events() {
    if (events == null) {
      recording.stop();
      try {
        Path file = Files.createTempFile("faro-file-io", ".jfr");
        try {
          recording.dump(file);
          events = RecordingFile.readAllEvents(file);
        } finally {
          Files.deleteIfExists(file);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return events;
  }

  /** File I/O of threads whose name matches {@code thread}, recorded so far. */
  public long countOn(Pattern thread) {
    return events().stream().filter(e -> thread.matcher(threadOf(e)).matches()).count();
  }

  /** Fails, naming each call and where it came from, if an event loop did file I/O. */
  public void assertNoneOnEventLoops() {
    List<String> onLoops =
        events().stream()
            .filter(e -> EVENT_LOOP.matcher(threadOf(e)).matches())
            .map(EventLoopFileIo::describe)
            .toList();
    assertThat(onLoops).as("file I/O on event-loop threads").isEmpty();
  }

  private static String threadOf(RecordedEvent e) {
    return e.getThread() == null ? "" : String.valueOf(e.getThread().getJavaName());
  }

  private static String describe(RecordedEvent e) {
    String frames =
        e.getStackTrace() == null
            ? ""
            : e.getStackTrace().getFrames().stream()
                .limit(12)
                .map(EventLoopFileIo::frame)
                .collect(Collectors.joining("\n    at ", "\n    at ", ""));
    return e.getEventType().getName()
        + " of "
        + (e.hasField("path") ? e.getValue("path") : "?")
        + " on "
        + threadOf(e)
        + frames;
  }

  private static String frame(RecordedFrame f) {
    return f.getMethod().getType().getName()
        + "."
        + f.getMethod().getName()
        + ":"
        + f.getLineNumber();
  }

  @Override
  public void close() {
    recording.close();
  }
}
