package io.faro.cli.advise;

import io.faro.common.json.Json;
import java.io.BufferedReader;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What one application's event log says about its shuffles: per stage, the tasks' run time, the
 * shuffle bytes and blocks they read, their fetch wait, what they wrote and spilled. Read from
 * Spark's JSON events (one per line): application start, environment (which shuffle manager), stage
 * submitted and completed (names), and task end (metrics). Other events are skipped without being
 * parsed; a line that is not JSON (the torn last line of a log still being written) is counted and
 * skipped.
 */
final class AppLog {
  String logName;
  String appId = "";
  String appName = "";
  String user = "";
  String shuffleManager = "";
  long startMillis;
  long endMillis;
  long unreadableLines;

  /** Lines that are Spark events at all; none: not an event log. */
  long events;

  /** Shuffles of an app on Faro that fell back to Spark's built-in shuffle, by reason kind. */
  final Map<String, Integer> fallbacks = new TreeMap<>();

  final Map<Integer, StageShuffle> stages = new TreeMap<>();

  /** One stage's tasks, summed over its attempts. */
  static final class StageShuffle {
    final int stageId;
    String name = "";
    long tasks;
    long runMillis;
    long blocksRead;
    long bytesRead;
    long fetchWaitMillis;
    long bytesWritten;
    long recordsWritten;
    long writeNanos;
    long spilledBytes;

    StageShuffle(int stageId) {
      this.stageId = stageId;
    }

    boolean reads() {
      return blocksRead > 0;
    }

    boolean writes() {
      return bytesWritten > 0 || recordsWritten > 0;
    }

    /** Bytes read per block, or 0 when none was read. */
    long averageBlockBytes() {
      return blocksRead == 0 ? 0 : bytesRead / blocksRead;
    }
  }

  /** Reads every file of {@code log} in order. */
  static AppLog read(EventLogFiles.Log log) throws IOException {
    AppLog app = new AppLog();
    app.logName = log.name();
    for (Path file : log.files()) {
      try (InputStream in = EventLogFiles.open(file);
          BufferedReader lines =
              new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
        for (String line; (line = readLine(lines, app)) != null; ) {
          app.accept(line);
        }
      }
    }
    if (app.appId.isEmpty()) {
      app.appId = log.name();
    }
    return app;
  }

  /** The next line, or null at the end; a stream that ends in the middle of a frame ends here. */
  private static String readLine(BufferedReader lines, AppLog app) throws IOException {
    try {
      return lines.readLine();
    } catch (EOFException e) {
      app.unreadableLines++;
      return null;
    }
  }

  private static final String[] WANTED = {
    "\"Event\":\"SparkListenerTaskEnd\"",
    "\"Event\":\"SparkListenerStageSubmitted\"",
    "\"Event\":\"SparkListenerStageCompleted\"",
    "\"Event\":\"SparkListenerApplicationStart\"",
    "\"Event\":\"SparkListenerApplicationEnd\"",
    "\"Event\":\"SparkListenerEnvironmentUpdate\"",
    "\"Event\":\"io.faro.spark.FaroShuffleFallback\"",
  };

  void accept(String line) {
    if (line.startsWith("{\"Event\":")) {
      events++;
    }
    String kind = null;
    for (String wanted : WANTED) {
      if (line.startsWith("{" + wanted)) {
        kind = wanted;
        break;
      }
    }
    if (kind == null) {
      return;
    }
    Map<String, Object> event;
    try {
      event = object(Json.parse(line));
    } catch (IllegalArgumentException e) {
      unreadableLines++;
      return;
    }
    switch (string(event, "Event")) {
      case "SparkListenerTaskEnd" -> taskEnd(event);
      case "SparkListenerStageSubmitted", "SparkListenerStageCompleted" -> stageInfo(event);
      case "SparkListenerApplicationStart" -> {
        appName = string(event, "App Name");
        appId = string(event, "App ID");
        user = string(event, "User");
        startMillis = number(event, "Timestamp");
      }
      case "SparkListenerApplicationEnd" -> endMillis = number(event, "Timestamp");
      case "io.faro.spark.FaroShuffleFallback" -> {
        String why = string(event, "kind");
        fallbacks.merge(why.isEmpty() ? "UNKNOWN" : why, 1, Integer::sum);
      }
      case "SparkListenerEnvironmentUpdate" -> {
        Object props = event.get("Spark Properties");
        String manager = property(props, "spark.shuffle.manager");
        if (manager != null) {
          shuffleManager = manager;
        }
      }
      default -> {}
    }
  }

  /** Whether the application ran its shuffles through Faro already. */
  boolean onFaro() {
    return shuffleManager.contains("Faro");
  }

  long taskMillis() {
    return stages.values().stream().mapToLong(s -> s.runMillis).sum();
  }

  private void stageInfo(Map<String, Object> event) {
    Map<String, Object> info = object(event.get("Stage Info"));
    StageShuffle stage = stage((int) number(info, "Stage ID"));
    String name = string(info, "Stage Name");
    if (!name.isEmpty()) {
      stage.name = name;
    }
  }

  private void taskEnd(Map<String, Object> event) {
    StageShuffle stage = stage((int) number(event, "Stage ID"));
    stage.tasks++;
    Map<String, Object> metrics = object(event.get("Task Metrics"));
    stage.runMillis += number(metrics, "Executor Run Time");
    stage.spilledBytes += number(metrics, "Disk Bytes Spilled");
    Map<String, Object> read = object(metrics.get("Shuffle Read Metrics"));
    stage.blocksRead +=
        number(read, "Remote Blocks Fetched") + number(read, "Local Blocks Fetched");
    stage.bytesRead += number(read, "Remote Bytes Read") + number(read, "Local Bytes Read");
    stage.fetchWaitMillis += number(read, "Fetch Wait Time");
    Map<String, Object> write = object(metrics.get("Shuffle Write Metrics"));
    stage.bytesWritten += number(write, "Shuffle Bytes Written");
    stage.recordsWritten += number(write, "Shuffle Records Written");
    stage.writeNanos += number(write, "Shuffle Write Time");
  }

  private StageShuffle stage(int id) {
    return stages.computeIfAbsent(id, StageShuffle::new);
  }

  /**
   * A Spark property from an environment update: an object of names to values (Spark 3 and 4), or a
   * list of [name, value] pairs.
   */
  private static String property(Object props, String key) {
    if (props instanceof Map<?, ?> map) {
      Object value = map.get(key);
      return value == null ? null : value.toString();
    }
    if (props instanceof List<?> list) {
      for (Object pair : list) {
        if (pair instanceof List<?> kv && kv.size() == 2 && key.equals(kv.get(0))) {
          return String.valueOf(kv.get(1));
        }
      }
    }
    return null;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> object(Object value) {
    return value instanceof Map<?, ?> map ? (Map<String, Object>) map : Map.of();
  }

  private static long number(Map<String, Object> object, String key) {
    return object.get(key) instanceof Number n ? n.longValue() : 0;
  }

  private static String string(Map<String, Object> object, String key) {
    return object.get(key) instanceof String s ? s : "";
  }
}
