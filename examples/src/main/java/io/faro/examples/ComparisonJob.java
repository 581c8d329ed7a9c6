package io.faro.examples;

import static io.faro.examples.JobScale.records;
import static io.faro.examples.JobScale.tasks;
import static org.apache.spark.sql.functions.col;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.spark.HashPartitioner;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import scala.Tuple2;

/**
 * The jobs {@link CompareJobs} times with Spark's built-in shuffle and with Faro. Each builds a
 * result whose rows depend only on the input, never on the order or the placement of shuffle
 * blocks, so both shuffles must produce the same rows.
 *
 * <p>Every size is a base figure times {@code scale}, as {@link JobScale} works it out: record
 * counts scale linearly and task counts with the square root, so that the records per shuffle block
 * stay the same at every scale.
 *
 * <p>The data comes from {@code xxhash64} of the row id, not from {@code rand()}: it is random
 * enough to spread keys and defeat compression where wanted, and it is the same in every run.
 *
 * <p>The iterators that slow down or fail a job's tasks on purpose are {@link PauseEvery}, {@link
 * StallFirstAttempt} and {@link FailAtEndOfFirstAttempt}.
 */
enum ComparisonJob {
  /**
   * A large shuffle: 30 million order-like rows (a random key, an amount, two low-cardinality
   * strings and a 64-character random token, about 150 bytes each as an UnsafeRow) from 48 map
   * tasks, repartitioned by the key into 200 reducers: about 3 GB through the shuffle at scale 1
   * after Spark's LZ4 compression (measured: 2961 MB written). The repartition has an explicit
   * count, so adaptive execution keeps all 200 reducers.
   */
  LARGE("large") {
    @Override
    Dataset<Row> result(SparkSession spark, double scale) {
      Dataset<Row> rows = largeRows(spark, records(30_000_000L, scale), tasks(48, scale));
      // For restart tests: maps that push slowly, so that workers restarted while they push are
      // caught with open partitions. Off by default.
      long mapPause = spark.sparkContext().getConf().getLong(MAP_PAUSE_KEY, 0);
      Dataset<Row> shuffled =
          (mapPause <= 0
                  ? rows
                  : rows.mapPartitions(
                      (MapPartitionsFunction<Row, Row>)
                          input -> new PauseEvery(input, 1000, mapPause),
                      rows.encoder()))
              .repartition(tasks(200, scale), col("k"));
      // For fault tests: reducers that read slowly, so that a worker killed while they read is
      // caught mid-read. Off by default (the plan is then exactly the above).
      long pause = spark.sparkContext().getConf().getLong(READ_PAUSE_KEY, 0);
      return pause <= 0
          ? shuffled
          : shuffled.mapPartitions(
              (MapPartitionsFunction<Row, Row>) input -> new PauseEvery(input, 1000, pause),
              shuffled.encoder());
    }
  },

  /**
   * Many small blocks: 400 map tasks x 1000 reducers over 4 million tiny rows (two longs), so each
   * block holds about 10 records (~200 bytes compressed). With the built-in shuffle every reducer
   * reads 400 tiny segments; with Faro it reads one file.
   */
  SMALL_BLOCKS("small-blocks") {
    @Override
    Dataset<Row> result(SparkSession spark, double scale) {
      return spark
          .range(0, records(4_000_000L, scale), 1, tasks(400, scale))
          .selectExpr("id", "xxhash64(id) AS k")
          .repartition(tasks(1000, scale), col("k"));
    }
  },

  /**
   * A shuffle of a chosen shape, for the disk-profile benchmark: {@code spark.examples.blocks.maps}
   * map tasks (default 200) into {@code spark.examples.blocks.reducers} reducers (default 500),
   * about {@code spark.examples.blocks.bytes} bytes (default 512 MiB) through the shuffle after
   * Spark's compression, times {@code scale}. The rows are the large job's (about 99 bytes each
   * compressed, measured on that job), so the record count is the bytes over 99.
   */
  BLOCKS("blocks") {
    @Override
    Dataset<Row> result(SparkSession spark, double scale) {
      SparkConf conf = spark.sparkContext().getConf();
      int maps = conf.getInt(BLOCKS_MAPS_KEY, 200);
      int reducers = conf.getInt(BLOCKS_REDUCERS_KEY, 500);
      long bytes = conf.getSizeAsBytes(BLOCKS_BYTES_KEY, "512m");
      if (maps < 1 || reducers < 1 || bytes < 1) {
        throw new IllegalArgumentException(
            BLOCKS_MAPS_KEY
                + ", "
                + BLOCKS_REDUCERS_KEY
                + " and "
                + BLOCKS_BYTES_KEY
                + " must be positive, not "
                + maps
                + ", "
                + reducers
                + ", "
                + bytes);
      }
      return largeRows(spark, records(Math.max(1, bytes / 99), scale), maps)
          .repartition(reducers, col("k"));
    }
  },

  /**
   * Spark SQL: 10 million orders joined with 1 million customers on the customer id, then
   * aggregated per region, segment and status (1000 groups) with a count, an exact sum and a
   * distinct count. Broadcast joins are off, so the join is a sort-merge join over two shuffles at
   * every scale (at a tiny scale Spark would otherwise broadcast the customers and shuffle nothing
   * for the join). Amounts are whole cents: a sum of doubles would depend on the order.
   */
  SQL("sql") {
    @Override
    Dataset<Row> result(SparkSession spark, double scale) {
      long customers = records(1_000_000L, scale);
      spark
          .range(0, records(10_000_000L, scale), 1, tasks(16, scale))
          .selectExpr(
              "id AS order_id",
              "pmod(xxhash64(id, 11), " + customers + ") AS customer_id",
              "pmod(xxhash64(id, 12), 100000) AS amount_cents",
              "element_at(array('pending', 'shipped', 'delivered', 'returned', 'cancelled'),"
                  + " int(pmod(xxhash64(id, 13), 5)) + 1) AS status")
          .createOrReplaceTempView("orders");
      spark
          .range(0, customers, 1, tasks(4, scale))
          .selectExpr(
              "id AS customer_id",
              "element_at(array('north', 'south', 'east', 'west', 'central'), int(pmod(xxhash64(id, 21), 5)) + 1)"
                  + " AS region",
              "concat('segment-', pmod(xxhash64(id, 22), 40)) AS segment")
          .createOrReplaceTempView("customers");
      return spark.sql(
          "SELECT c.region, c.segment, o.status, count(*) AS orders,"
              + " sum(o.amount_cents) AS total_cents, count(DISTINCT o.customer_id) AS buyers"
              + " FROM orders o JOIN customers c ON o.customer_id = c.customer_id"
              + " GROUP BY c.region, c.segment, o.status");
    }

    @Override
    void configure(SparkConf conf, double scale) {
      conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
          .set("spark.sql.shuffle.partitions", Integer.toString(tasks(200, scale)));
    }
  },

  /**
   * A million reducers: 20,000 rows from 4 map tasks grouped by 1,000 keys, with
   * spark.sql.shuffle.partitions at 1,000,000. Each map writes at most 1,000 rows (after its
   * partial aggregation) into a shuffle of a million partitions, spread over all of them by the
   * key's hash; adaptive execution then coalesces the million into a few reduce tasks. The scale
   * changes the rows, never the partitions: the point is the shuffle's width, which costs the
   * driver (its map statuses, and with Faro the locations) whatever the data.
   */
  WIDE("wide") {
    @Override
    Dataset<Row> result(SparkSession spark, double scale) {
      return spark
          .range(0, records(20_000L, scale), 1, 4)
          .selectExpr("pmod(xxhash64(id), 1000) AS k", "id")
          .groupBy("k")
          .agg(functions.count("id").as("n"), functions.sum("id").as("ids"));
    }

    @Override
    void configure(SparkConf conf, double scale) {
      conf.set("spark.sql.shuffle.partitions", "1000000")
          .set("spark.sql.adaptive.coalescePartitions.enabled", "true");
    }
  },

  /**
   * Many live shuffles: {@code spark.examples.shuffles.count} (default 1,000) small shuffles, each
   * 2 map tasks of 100 rows into 10 reducers, all still referenced (so registered with the shuffle
   * manager) when the job ends; the result is each shuffle's row count and sum. For the driver's
   * memory and threads against the number of shuffles, which CompareJobs reports for every job.
   */
  SHUFFLES("shuffles") {
    @Override
    Dataset<Row> result(SparkSession spark, double scale) {
      int count = spark.sparkContext().getConf().getInt(SHUFFLES_COUNT_KEY, 1000);
      JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
      List<Long> ids = new ArrayList<>();
      for (long i = 0; i < 200; i++) {
        ids.add(i);
      }
      List<Row> rows = new ArrayList<>();
      for (int s = 0; s < count; s++) {
        int shift = s;
        JavaPairRDD<Long, Long> shuffled =
            sc.parallelize(ids, 2)
                .mapToPair(i -> new Tuple2<>((i * 31 + shift) % 97, i))
                .partitionBy(new HashPartitioner(10));
        LIVE_SHUFFLES.add(shuffled);
        long sum = shuffled.values().reduce(Long::sum);
        rows.add(RowFactory.create((long) s, shuffled.count(), sum));
      }
      return spark.createDataFrame(
          rows,
          new StructType()
              .add("shuffle", DataTypes.LongType)
              .add("rows", DataTypes.LongType)
              .add("sum", DataTypes.LongType));
    }
  },

  /**
   * One huge reducer: 4 million rows of about 100 bytes (a 64-character random token) from 8 map
   * tasks into 16 reducers, a quarter of them with the same key: one reducer receives over a
   * quarter of the data (seed 000's GlobalLimit over a huge scan, in small). With a small
   * faro.worker.partition.split.threshold its partition splits over every worker.
   */
  SKEW("skew") {
    @Override
    Dataset<Row> result(SparkSession spark, double scale) {
      return spark
          .range(0, records(4_000_000L, scale), 1, tasks(8, scale))
          .selectExpr(
              "id",
              "CASE WHEN pmod(id, 4) = 0 THEN 0 ELSE xxhash64(id) END AS k",
              "concat(hex(xxhash64(id, 1)), hex(xxhash64(id, 2)), hex(xxhash64(id, 3)), hex(xxhash64(id, 4)))"
                  + " AS token")
          .repartition(tasks(16, scale), col("k"));
    }
  },

  /**
   * Retried map tasks: the large job's rows from 12 map tasks into 40 reducers, where the first
   * attempt of every third map task fails after it has pushed all its rows; the second attempt
   * pushes them again. Needs task retries ({@code spark.master=local[2,4]}). The reader must keep
   * only the winning attempt's data.
   */
  FLAKY("flaky") {
    @Override
    Dataset<Row> result(SparkSession spark, double scale) {
      Dataset<Row> rows =
          spark
              .range(0, records(2_000_000L, scale), 1, tasks(12, scale))
              .selectExpr(
                  "id",
                  "xxhash64(id) AS k",
                  "concat(hex(xxhash64(id, 1)), hex(xxhash64(id, 2))) AS token");
      return rows.mapPartitions(
              (MapPartitionsFunction<Row, Row>) input -> new FailAtEndOfFirstAttempt(input),
              rows.encoder())
          .repartition(tasks(40, scale), col("k"));
    }
  },

  /**
   * Stragglers for speculation: 2 million rows from 8 map tasks into 40 reducers, where the first
   * attempt of every fourth map task (partitions 1 and 5 at scale 0.25) stops for up to a minute
   * once it has produced half its rows, so its first half is already pushed. With {@code
   * spark.speculation=true} on a cluster whose executors sit on different hosts, Spark starts a
   * copy of each straggler elsewhere, keeps the copy's output and kills the straggler. Without
   * speculation the stop is skipped, so the rows are the same in every mode.
   */
  SLOW("slow") {
    @Override
    Dataset<Row> result(SparkSession spark, double scale) {
      long records = records(2_000_000L, scale);
      int maps = tasks(16, scale);
      Dataset<Row> rows =
          spark
              .range(0, records, 1, maps)
              .selectExpr(
                  "id",
                  "xxhash64(id) AS k",
                  "concat(hex(xxhash64(id, 1)), hex(xxhash64(id, 2))) AS token");
      long half = records / maps / 2;
      return rows.mapPartitions(
              (MapPartitionsFunction<Row, Row>) input -> new StallFirstAttempt(input, half),
              rows.encoder())
          .repartition(tasks(80, scale), col("k"));
    }
  },

  /**
   * Executors released between two reads of one shuffle, for dynamic allocation: 1 million rows
   * from 8 map tasks go through one shuffle into 20 reducers and are counted; then the job waits
   * (up to a minute) until dynamic allocation has removed every executor, and reads the same
   * shuffle again for its result, on executors started for that read. With Faro every map output is
   * still there for the second read (it lives on Faro's workers), so the map stage does not run
   * again. Without dynamic allocation nothing waits. {@code spark.examples.released.wait.seconds}
   * sets the wait (default 60).
   */
  RELEASED("released") {
    @Override
    Dataset<Row> result(SparkSession spark, double scale) {
      Dataset<Row> rows =
          spark
              .range(0, records(1_000_000L, scale), 1, tasks(16, scale))
              .selectExpr("id", "xxhash64(id) AS k");
      JavaRDD<Row> shuffled =
          rows.javaRDD()
              .keyBy(r -> r.getLong(1))
              .partitionBy(new HashPartitioner(tasks(40, scale)))
              .values();
      shuffled.count();
      executorsLeftBeforeReread = ExecutorWait.awaitNoExecutors(spark, RELEASED_WAIT_KEY);
      return spark.createDataFrame(shuffled, rows.schema());
    }
  };

  /** Spark setting: how many shuffles the shuffles job makes (default 1,000). */
  static final String SHUFFLES_COUNT_KEY = "spark.examples.shuffles.count";

  /** The shuffles job's shuffles, referenced until the JVM ends so that none is cleaned. */
  static final List<Object> LIVE_SHUFFLES = Collections.synchronizedList(new ArrayList<>());

  /** Spark setting: seconds the released job waits for executors to go (default 60). */
  static final String RELEASED_WAIT_KEY = "spark.examples.released.wait.seconds";

  /** The released job's executors left before its second read; -1 until it ran. */
  static volatile int executorsLeftBeforeReread = -1;

  /**
   * Spark setting: milliseconds the large job's reducers pause after every 1000 rows (default 0).
   */
  static final String READ_PAUSE_KEY = "spark.examples.readPauseMillis";

  /** Spark setting: milliseconds the large job's maps pause after every 1000 rows (default 0). */
  static final String MAP_PAUSE_KEY = "spark.examples.mapPauseMillis";

  private final String cliName;

  ComparisonJob(String cliName) {
    this.cliName = cliName;
  }

  /** The job's rows; building it runs nothing, the caller's action does. */
  abstract Dataset<Row> result(SparkSession spark, double scale);

  /** Settings this job needs before the SparkContext starts. */
  void configure(SparkConf conf, double scale) {}

  /** The name used on the command line and in the JSON output. */
  String cliName() {
    return cliName;
  }

  static ComparisonJob fromCliName(String name) {
    for (ComparisonJob job : values()) {
      if (job.cliName.equals(name)) {
        return job;
      }
    }
    throw new IllegalArgumentException(
        "unknown job '"
            + name
            + "'; one of large, small-blocks, blocks, sql, skew, flaky, slow, released");
  }

  /**
   * Order-like rows (a random key, an amount, two low-cardinality strings and a 64-character random
   * token): about 150 bytes each as an UnsafeRow, 99 after LZ4, from {@code maps} tasks.
   */
  static Dataset<Row> largeRows(SparkSession spark, long records, int maps) {
    return spark
        .range(0, records, 1, maps)
        .selectExpr(
            "id",
            "xxhash64(id) AS k",
            "pmod(xxhash64(id, 1), 100000000) AS amount_cents",
            "concat('customer-', pmod(xxhash64(id, 2), 1000000)) AS customer",
            "element_at(array('pending', 'shipped', 'delivered', 'returned', 'cancelled'),"
                + " int(pmod(xxhash64(id, 3), 5)) + 1) AS status",
            "concat(hex(xxhash64(id, 4)), hex(xxhash64(id, 5)), hex(xxhash64(id, 6)), hex(xxhash64(id, 7)))"
                + " AS token");
  }

  /** Spark setting: the blocks job's map tasks. */
  static final String BLOCKS_MAPS_KEY = "spark.examples.blocks.maps";

  /** Spark setting: the blocks job's reducers. */
  static final String BLOCKS_REDUCERS_KEY = "spark.examples.blocks.reducers";

  /** Spark setting: the blocks job's shuffle size after compression, e.g. 2g. */
  static final String BLOCKS_BYTES_KEY = "spark.examples.blocks.bytes";
}
