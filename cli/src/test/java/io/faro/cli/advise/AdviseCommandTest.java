package io.faro.cli.advise;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.luben.zstd.ZstdOutputStream;
import io.faro.common.json.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import net.jpountz.lz4.LZ4BlockOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Event logs in each form Spark writes them (plain, lz4, zstd, still being written, rolling), with
 * the events and fields Spark's JsonProtocol writes; the Faro-run and real-Spark ranking is
 * AdviseIT's.
 */
class AdviseCommandTest {
  @TempDir Path dir;

  /** The lines of one application's log: a map stage and a reduce stage reading {@code blocks}. */
  private static List<String> app(
      String id, String name, String manager, int maps, int reducers, long blocks, long bytes) {
    List<String> lines = new ArrayList<>();
    lines.add("{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"3.5.9\"}");
    lines.add(
        "{\"Event\":\"SparkListenerApplicationStart\",\"App Name\":\""
            + name
            + "\",\"App ID\":\""
            + id
            + "\",\"Timestamp\":1000,\"User\":\"etl\"}");
    lines.add(
        "{\"Event\":\"SparkListenerEnvironmentUpdate\",\"JVM Information\":{},\"Spark Properties\":"
            + "{\"spark.app.name\":\""
            + name
            + "\""
            + (manager == null ? "" : ",\"spark.shuffle.manager\":\"" + manager + "\"")
            + "},\"System Properties\":{}}");
    lines.add(
        "{\"Event\":\"SparkListenerStageSubmitted\",\"Stage Info\":{\"Stage ID\":0,\"Stage Attempt"
            + " ID\":0,\"Stage Name\":\"map at Job.java:10\",\"Number of Tasks\":"
            + maps
            + "}}");
    for (int m = 0; m < maps; m++) {
      lines.add(taskEnd(0, 100, 0, 0, 0, bytes / maps));
    }
    lines.add(
        "{\"Event\":\"SparkListenerStageCompleted\",\"Stage Info\":{\"Stage ID\":1,\"Stage Attempt"
            + " ID\":0,\"Stage Name\":\"collect at Job.java:12\",\"Number of Tasks\":"
            + reducers
            + "}}");
    for (int r = 0; r < reducers; r++) {
      lines.add(taskEnd(1, 50, blocks / reducers, bytes / reducers, 5, 0));
    }
    lines.add("{\"Event\":\"SparkListenerApplicationEnd\",\"Timestamp\":61000}");
    return lines;
  }

  private static String taskEnd(
      int stage, long runMillis, long blocks, long readBytes, long waitMillis, long written) {
    return "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":"
        + stage
        + ",\"Stage Attempt ID\":0,\"Task Type\":\"ShuffleMapTask\",\"Task End Reason\":{\"Reason\":"
        + "\"Success\"},\"Task Info\":{\"Task ID\":1},\"Task Metrics\":{\"Executor Run Time\":"
        + runMillis
        + ",\"Memory Bytes Spilled\":0,\"Disk Bytes Spilled\":"
        + (stage == 0 ? 1024 : 0)
        + ",\"Shuffle Read Metrics\":{\"Remote Blocks Fetched\":"
        + blocks / 2
        + ",\"Local Blocks Fetched\":"
        + (blocks - blocks / 2)
        + ",\"Fetch Wait Time\":"
        + waitMillis
        + ",\"Remote Bytes Read\":"
        + readBytes / 2
        + ",\"Remote Bytes Read To Disk\":0,\"Local Bytes Read\":"
        + (readBytes - readBytes / 2)
        + ",\"Total Records Read\":10},\"Shuffle Write Metrics\":{\"Shuffle Bytes Written\":"
        + written
        + ",\"Shuffle Write Time\":"
        + (written > 0 ? 5_000_000 : 1000)
        + ",\"Shuffle Records Written\":"
        + (written > 0 ? 10 : 0)
        + "}}}";
  }

  private static byte[] text(List<String> lines) {
    return (String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8);
  }

  private void write(String name, byte[] bytes) throws IOException {
    Files.write(dir.resolve(name), bytes);
  }

  private static byte[] lz4(byte[] plain) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    // Two block streams one after the other, as a log appended to twice is.
    int half = plain.length / 2;
    for (byte[] piece :
        List.of(
            Arrays.copyOfRange(plain, 0, half), Arrays.copyOfRange(plain, half, plain.length))) {
      try (OutputStream lz4 = new LZ4BlockOutputStream(nonClosing(out), 32 * 1024)) {
        lz4.write(piece);
      }
    }
    return out.toByteArray();
  }

  /** As Spark's event log writer does: flushed after every event, so a torn log loses its tail. */
  private static byte[] zstd(byte[] plain) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (OutputStream zstd = new ZstdOutputStream(out)) {
      int start = 0;
      for (int i = 0; i < plain.length; i++) {
        if (plain[i] == '\n') {
          zstd.write(plain, start, i + 1 - start);
          zstd.flush();
          start = i + 1;
        }
      }
      zstd.write(plain, start, plain.length - start);
    }
    return out.toByteArray();
  }

  private static OutputStream nonClosing(OutputStream out) {
    return new java.io.FilterOutputStream(out) {
      @Override
      public void close() throws IOException {
        flush();
      }
    };
  }

  /** Runs {@code faro advise}; its exit code, standard output and error. */
  private static String[] advise(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code =
        new CommandLine(new AdviseCommand())
            .setOut(new PrintWriter(out, true))
            .setErr(new PrintWriter(err, true))
            .execute(args);
    return new String[] {String.valueOf(code), out.toString(), err.toString()};
  }

  @SuppressWarnings("unchecked")
  private List<Map<String, Object>> json(String... extra) {
    List<String> args = new ArrayList<>(List.of("--event-logs", dir.toString(), "--json", "-"));
    args.addAll(List.of(extra));
    String[] result = advise(args.toArray(String[]::new));
    assertThat(result[0]).as(result[2]).isEqualTo("0");
    return (List<Map<String, Object>>)
        ((Map<String, Object>) Json.parse(result[1])).get("applications");
  }

  @Test
  void readsEveryFormSparkWritesAndRanksByTheEstimatedSaving() throws IOException {
    // 200 maps x 2,000 reducers, 400,000 blocks of 200 bytes: the many-small-blocks job.
    write(
        "app-small.zstd",
        zstd(text(app("app-small", "small blocks", null, 200, 2000, 400_000, 80_000_000))));
    // 8 x 8, 64 blocks of 16 MiB.
    write("app-large.lz4", lz4(text(app("app-large", "large blocks", null, 8, 8, 64, 64L << 24))));
    // A tiny shuffle: 2 x 2 blocks of a kilobyte.
    write("local-tiny", text(app("local-tiny", "tiny", null, 2, 2, 4, 4096)));
    // Already on Faro.
    write(
        "app-faro.inprogress",
        text(
            app(
                "app-faro",
                "on faro",
                "org.apache.spark.shuffle.FaroShuffleManager",
                4,
                4,
                4,
                1 << 20)));
    // A rolling log, in two files read in the order of their index (10 after 9).
    Path rolling = Files.createDirectories(dir.resolve("eventlog_v2_app-rolling"));
    List<String> lines = app("app-rolling", "rolling", null, 100, 1000, 100_000, 20_000_000);
    Files.write(rolling.resolve("events_9_app-rolling"), text(lines.subList(0, 50)));
    Files.write(rolling.resolve("events_10_app-rolling"), text(lines.subList(50, lines.size())));
    Files.write(rolling.resolve("appstatus_app-rolling"), new byte[0]);
    // What a local file system writes beside a log.
    write(".app-small.zstd.crc", new byte[] {1, 2, 3});

    List<Map<String, Object>> apps = json();

    assertThat(apps)
        .extracting(a -> a.get("app_id"))
        .containsExactly("app-small", "app-rolling", "local-tiny", "app-large", "app-faro");
    Map<String, Object> small = apps.get(0);
    assertThat(small.get("verdict")).isEqualTo("move to Faro");
    assertThat(small.get("user")).isEqualTo("etl");
    assertThat(small.get("name")).isEqualTo("small blocks");
    List<Map<String, Object>> stages = (List<Map<String, Object>>) small.get("stages");
    assertThat(stages).hasSize(2);
    assertThat(stages.get(1))
        .containsEntry("blocks_read", 400_000L)
        .containsEntry("average_block_bytes", 200L)
        .containsEntry("fetch_wait_millis", 10_000L)
        .containsEntry("tasks", 2000L)
        .containsEntry("name", "collect at Job.java:12");
    assertThat(stages.get(0)).containsEntry("spilled_bytes", 200L * 1024);
    // Reading: 400,000 blocks (9.6 s) and 90% of 10 s of fetch wait (9 s), less 76.3 MiB read
    // (6.1 ms) and 2,000 reduce reads (200 ms). Writing: 200 map tasks blocked 5 ms each on their
    // files, 3 ms past the per-task part, saved 3 times (1.8 s), less 76.3 MiB pushed (503.5 ms),
    // a shuffle (12 ms) and 200 map ends (80 ms). Less an application's first shuffles (600 ms).
    double mib = 80_000_000 / (1024.0 * 1024.0);
    assertThat((Long) small.get("saved_task_millis"))
        .isEqualTo(
            Math.round(9_600 + 9_000 - mib * 0.08 - 200 + 1_800 - mib * 6.6 - 12 - 80 - 600));
    assertThat(apps.get(1).get("verdict")).isEqualTo("move to Faro");
    assertThat(apps.get(2).get("verdict"))
        .isEqualTo("keep the built-in shuffle: Faro would cost more than it saves");
    assertThat(apps.get(3).get("verdict"))
        .isEqualTo("keep the built-in shuffle: Faro would cost more than it saves");
    assertThat(apps.get(4).get("verdict")).isEqualTo("runs on Faro already");
    assertThat(apps.get(4).get("estimated")).isEqualTo(false);
  }

  @Test
  void theMarkdownReportRanksAndExplainsPerStage() throws IOException {
    write("app-small", text(app("app-small", "small", null, 20, 200, 4_000, 800_000)));
    write("app-none", text(app("app-none", "no shuffle", null, 0, 0, 0, 0)));
    String[] result = advise("--event-logs", dir.toString());
    assertThat(result[0]).as(result[2]).isEqualTo("0");
    String md = result[1];
    assertThat(md)
        .contains("# Faro advice: 2 applications")
        .contains("| 1 | app-small | small | etl |")
        .contains("| 2 | app-none | no shuffle | etl |")
        .contains("no shuffle |")
        .contains("## app-small (small)")
        .contains("| 1 | collect at Job.java:12 | 200 |")
        .doesNotContain("## app-none");
  }

  @Test
  void aLogStillBeingWrittenIsReadUpToItsTornEnd() throws IOException {
    byte[] whole = zstd(text(app("app-torn", "torn", null, 4, 40, 160, 16_000)));
    // Cut in the middle of the frame, as a log being written is when read.
    write("app-torn.zstd.inprogress", Arrays.copyOf(whole, whole.length * 2 / 3));
    byte[] plain = text(app("app-plain", "plain", null, 4, 40, 160, 16_000));
    // Torn in its last event, the application's end.
    write("app-plain.inprogress", Arrays.copyOf(plain, plain.length - 5));
    List<Map<String, Object>> apps = json();
    assertThat(apps).extracting(a -> a.get("app_id")).contains("app-torn", "app-plain");
    Map<String, Object> plainApp =
        apps.stream().filter(a -> a.get("app_id").equals("app-plain")).findFirst().orElseThrow();
    assertThat(plainApp.get("unreadable_lines")).isEqualTo(1L);
  }

  @Test
  void anAppOnFaroSaysHowManyShufflesFellBackAndAStrayFileIsSkipped() throws IOException {
    List<String> lines =
        new ArrayList<>(
            app("app-faro", "on faro", "io.faro.spark.FaroShuffleManager", 4, 4, 16, 4096));
    lines.add(
        lines.size() - 1,
        "{\"Event\":\"io.faro.spark.FaroShuffleFallback\",\"shuffleId\":3,\"policy\":\"auto\","
            + "\"kind\":\"REFUSED\",\"reason\":\"admission rule 1\"}");
    write("app-faro", text(lines));
    write("notes.txt", "not an event log\n".getBytes(StandardCharsets.UTF_8));
    // A rolling log's compacted file, named with its codec before .compact.
    Path rolling = Files.createDirectories(dir.resolve("eventlog_v2_app-compacted"));
    Files.write(
        rolling.resolve("events_1_app-compacted.zstd.compact"),
        zstd(text(app("app-compacted", "compacted", null, 20, 200, 4_000, 800_000))));
    String[] result = advise("--event-logs", dir.toString(), "--json", "-");
    assertThat(result[0]).as(result[2]).isEqualTo("0");
    assertThat(result[2]).contains("skipped notes.txt: not a Spark event log");
    assertThat(result[1])
        .contains(
            "runs on Faro already; 1 shuffles fell back to the built-in shuffle ({REFUSED=1})")
        .contains("\"app_id\": \"app-compacted\"");
  }

  @Test
  void aSnappyLogIsNamedAsUnreadableAndTheOthersAreStillRead() throws IOException {
    write("app-snappy.snappy", new byte[] {0, 1, 2});
    write("app-ok", text(app("app-ok", "ok", null, 2, 2, 4, 4096)));
    String[] result = advise("--event-logs", dir.toString(), "--json", "-");
    assertThat(result[0]).isEqualTo("0");
    assertThat(result[2])
        .contains("skipped app-snappy.snappy")
        .contains("snappy, which advise cannot read; it reads plain, lz4 and zstd");
    assertThat(result[1]).contains("app-ok");
  }

  @Test
  void oneLogFileAndTheJsonFileOption() throws IOException {
    write("app-one", text(app("app-one", "one", null, 20, 200, 4_000, 800_000)));
    Path report = dir.resolve("report.json");
    String[] result =
        advise("--event-logs", dir.resolve("app-one").toString(), "--json", report.toString());
    assertThat(result[0]).as(result[2]).isEqualTo("0");
    assertThat(result[1]).contains("| 1 | app-one | one |");
    assertThat(Files.readString(report)).contains("\"app_id\": \"app-one\"");
  }

  @Test
  void aMissingPathOrOneWithoutLogsIsAnError() throws IOException {
    String[] missing = advise("--event-logs", dir.resolve("nope").toString());
    assertThat(missing[0]).isNotEqualTo("0");
    assertThat(missing[2]).contains("no such file or directory").contains("nope");
    Files.createDirectories(dir.resolve("empty"));
    String[] empty = advise("--event-logs", dir.resolve("empty").toString());
    assertThat(empty[0]).isNotEqualTo("0");
    assertThat(empty[2]).contains("no event log found in");
  }
}
