package io.faro.examples;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.shiftrightunsigned;
import static org.apache.spark.sql.functions.sum;
import static org.apache.spark.sql.functions.xxhash64;

import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Runs one {@link ComparisonJob} in one shuffle mode and prints one JSON line on stdout, for {@code
 * bench/spark-compare.sh}, which runs every job in a fresh JVM per mode and repetition so that no
 * run inherits another's JIT, caches or shuffle files. Like {@link ShuffleDemo} it knows nothing of
 * Faro's classes: mode {@code faro} only adds the settings a user would add.
 *
 * <p>Arguments: {@code --job large|small-blocks|blocks|sql|wide|shuffles|skew|flaky|slow|released},
 * {@code --mode builtin|faro}, {@code --master-endpoints host:port[,...]} (mode faro), {@code
 * --scale X} (default 1) and {@code --local-dir DIR} (Spark's {@code spark.local.dir}, where the
 * built-in shuffle writes) and {@code --conf key=value}, repeatable, for any further Spark setting.
 *
 * <p>The output: {@code job}, {@code mode}, {@code scale}, {@code millis} (the action alone, after
 * the SparkContext has started), {@code records} (rows of the job's result), {@code checksum},
 * {@code shuffle_write_bytes}, {@code shuffle_write_records}, {@code shuffle_read_bytes}, {@code
 * shuffle_fetch_wait_millis} (summed over reduce tasks: the time they waited for shuffle data) and
 * {@code shuffle_write_millis} (summed over map tasks), as the tasks reported them to Spark, {@code
 * stage_retries} (stage attempts after the first), {@code failed_tasks} (attempts that ended
 * otherwise than in success, killed ones included), {@code speculative_tasks} (speculative copies
 * Spark started), {@code executors_removed} (by dynamic allocation or lost), {@code
 * shuffle_manager} (the class that really ran) and {@code spark_version}. The checksum is the sum
 * of a 64-bit hash of every row, modulo 2^64, and the row count ({@code "<16 hex
 * digits>:<count>"}): it does not depend on the order of the rows, which no job here defines.
 *
 * <p>Exits with 1 if the job fails and with 3 if mode faro did not run Faro's shuffle manager (a
 * comparison against a silent fallback would be meaningless).
 */
public final class CompareJobs {
  public static final String FARO_SHUFFLE_MANAGER = "io.faro.spark.FaroShuffleManager";

  /** Spark setting: milliseconds the large job's maps pause after every 1000 rows (default 0). */
  public static final String MAP_PAUSE_KEY = ComparisonJob.MAP_PAUSE_KEY;

  /** Spark setting: milliseconds the large job's reducers pause after every 1000 rows. */
  public static final String READ_PAUSE_KEY = ComparisonJob.READ_PAUSE_KEY;

  private static final String JOB_GROUP = "faro-compare";

  private CompareJobs() {}

  /** The parsed command line. */
  record Options(
      ComparisonJob job,
      String mode,
      double scale,
      String masterEndpoints,
      String localDir,
      Map<String, String> extraConf) {
    static Options parse(String[] args) {
      Map<String, String> values = new LinkedHashMap<>();
      Map<String, String> extraConf = new LinkedHashMap<>();
      for (int i = 0; i < args.length; i += 2) {
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException("missing value of " + args[i]);
        }
        String value = args[i + 1];
        if (args[i].equals("--conf")) {
          int eq = value.indexOf('=');
          if (eq <= 0) {
            throw new IllegalArgumentException("--conf takes key=value, not " + value);
          }
          extraConf.put(value.substring(0, eq), value.substring(eq + 1));
        } else if (List.of("--job", "--mode", "--scale", "--master-endpoints", "--local-dir")
            .contains(args[i])) {
          values.put(args[i], value);
        } else {
          throw new IllegalArgumentException("unknown argument " + args[i]);
        }
      }
      String job = require(values, "--job");
      String mode = require(values, "--mode");
      if (!mode.equals("builtin") && !mode.equals("faro")) {
        throw new IllegalArgumentException("--mode must be builtin or faro, not " + mode);
      }
      if (mode.equals("faro") && !values.containsKey("--master-endpoints")) {
        throw new IllegalArgumentException("--mode faro needs --master-endpoints host:port");
      }
      double scale = Double.parseDouble(values.getOrDefault("--scale", "1"));
      if (!(scale > 0)) {
        throw new IllegalArgumentException("--scale must be positive, not " + scale);
      }
      return new Options(
          ComparisonJob.fromCliName(job),
          mode,
          scale,
          values.get("--master-endpoints"),
          values.get("--local-dir"),
          Map.copyOf(extraConf));
    }

    private static String require(Map<String, String> values, String key) {
      String value = values.get(key);
      if (value == null) {
        throw new IllegalArgumentException(key + " is required");
      }
      return value;
    }
  }

  public static void main(String[] args) {
    Options options;
    try {
      options = Options.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println(
          "CompareJobs: "
              + e.getMessage()
              + "\nusage: CompareJobs --job large|small-blocks|blocks|sql|wide|shuffles|skew|flaky|slow|released"
              + " --mode builtin|faro [--master-endpoints host:port] [--scale X] [--local-dir DIR] [--conf k=v]...");
      System.exit(2);
      return;
    }
    int code;
    try {
      code = run(options);
    } catch (Exception e) {
      System.err.println("CompareJobs failed:");
      e.printStackTrace();
      code = 1;
    }
    // Exits explicitly: a library's non-daemon thread must not keep a finished run alive.
    System.exit(code);
  }

  private static int run(Options options) throws Exception {
    SparkSession spark = SparkSession.builder().config(conf(options)).getOrCreate();
    try {
      ShuffleBytesListener listener = new ShuffleBytesListener();
      spark.sparkContext().addSparkListener(listener);
      // The group names the jobs of this action, for the listener to wait on.
      spark.sparkContext().setJobGroup(JOB_GROUP, options.job().cliName(), false);
      Dataset<Row> result = options.job().result(spark, options.scale());
      long start = System.nanoTime();
      Row sums = checksumOf(result).collectAsList().get(0);
      long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      List<Integer> jobIds =
          Arrays.stream(spark.sparkContext().statusTracker().getJobIdsForGroup(JOB_GROUP))
              .boxed()
              .toList();
      ShuffleBytesListener.Totals totals = listener.awaitJobs(jobIds, 60, TimeUnit.SECONDS);
      String manager = SparkEnv.get().shuffleManager().getClass().getName();
      Map<String, Object> line = new LinkedHashMap<>();
      line.put("job", options.job().cliName());
      line.put("mode", options.mode());
      line.put("scale", options.scale());
      line.put("millis", millis);
      line.put("records", sums.getLong(0));
      line.put("checksum", checksum(sums));
      line.put("shuffle_write_bytes", totals.writeBytes());
      line.put("shuffle_write_records", totals.writeRecords());
      line.put("shuffle_read_bytes", totals.readBytes());
      line.put("shuffle_fetch_wait_millis", totals.fetchWaitMillis());
      line.put("shuffle_write_millis", TimeUnit.NANOSECONDS.toMillis(totals.writeTimeNanos()));
      line.put("stage_retries", totals.stageRetries());
      line.put("failed_tasks", totals.failedTasks());
      line.put("speculative_tasks", totals.speculativeTasks());
      line.put("executors_removed", totals.executorsRemoved());
      if (options.job() == ComparisonJob.RELEASED) {
        line.put("executors_left_before_reread", ComparisonJob.executorsLeftBeforeReread);
      }
      line.put("shuffle_manager", manager);
      line.put("spark_version", spark.version());
      // The driver's (in local mode, the whole JVM's) heap after a collection, and its threads.
      System.gc();
      line.put(
          "heap_used_after_gc_bytes",
          ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
      line.put("threads", ManagementFactory.getThreadMXBean().getThreadCount());
      System.out.println(toJson(line));
      boolean faroRan = manager.equals(FARO_SHUFFLE_MANAGER);
      if (options.mode().equals("faro") != faroRan) {
        System.err.println(
            "CompareJobs: mode " + options.mode() + " ran shuffle manager " + manager);
        return 3;
      }
      return 0;
    } finally {
      spark.stop();
    }
  }

  private static SparkConf conf(Options options) {
    // local[2]: the benchmark machine has 2 cores. The heap is the launcher's -Xmx (in local
    // mode the driver is the executor); Spark's memory fractions are left at their defaults.
    SparkConf conf =
        new SparkConf()
            .setMaster("local[2]")
            .setAppName("faro-compare-" + options.job().cliName() + "-" + options.mode())
            .set("spark.ui.enabled", "false")
            .set("spark.driver.host", "127.0.0.1")
            .set("spark.driver.bindAddress", "127.0.0.1")
            .set("spark.sql.adaptive.enabled", "true");
    if (options.localDir() != null) {
      conf.set("spark.local.dir", options.localDir());
    }
    if (options.mode().equals("faro")) {
      conf.set("spark.shuffle.manager", FARO_SHUFFLE_MANAGER)
          .set("spark.faro.master.endpoints", options.masterEndpoints())
          .set("spark.shuffle.service.enabled", "false");
    }
    options.job().configure(conf, options.scale());
    // Last, so that an experiment can override anything above (e.g. an event log, a Faro setting).
    options.extraConf().forEach(conf::set);
    return conf;
  }

  /** One row: the row count, and the sums of the high and of the low 32 bits of each row's hash. */
  static Dataset<Row> checksumOf(Dataset<Row> result) {
    Column[] columns =
        Arrays.stream(result.columns()).map(c -> col("`" + c + "`")).toArray(Column[]::new);
    return result
        .select(xxhash64(columns).as("h"))
        .agg(
            count(lit(1)),
            sum(shiftrightunsigned(col("h"), 32)),
            sum(col("h").bitwiseAND(0xFFFFFFFFL)));
  }

  /**
   * {@code "<sum of the row hashes modulo 2^64, 16 hex digits>:<row count>"} from {@link
   * #checksumOf}'s row.
   */
  static String checksum(Row sums) {
    // Sums of the high and low halves cannot overflow (< 2^32 * 2^31 rows); recombined with
    // wrapping long arithmetic they give the sum of the hashes modulo 2^64.
    long high = sums.isNullAt(1) ? 0 : sums.getLong(1);
    long low = sums.isNullAt(2) ? 0 : sums.getLong(2);
    return String.format(Locale.ROOT, "%016x:%d", (high << 32) + low, sums.getLong(0));
  }

  private static String toJson(Map<String, Object> fields) {
    return fields.entrySet().stream()
        .map(
            e ->
                "\""
                    + e.getKey()
                    + "\":"
                    + (e.getValue() instanceof String s ? quote(s) : e.getValue()))
        .collect(Collectors.joining(",", "{", "}"));
  }

  private static String quote(String s) {
    StringBuilder out = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') {
        out.append('\\').append(c);
      } else if (c < 0x20) {
        out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    return out.append('"').toString();
  }
}
