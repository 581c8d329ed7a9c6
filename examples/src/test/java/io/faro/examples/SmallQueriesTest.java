package io.faro.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/**
 * Every query of the small-queries benchmark runs on the tables it is written for (Spark's built-in
 * shuffle, local mode, a fifth of the benchmark's tables): the queries over empty inputs return
 * nothing and every other one returns rows. A query that does not parse, reads a missing column or
 * has become empty by mistake would otherwise show only when someone runs the benchmark.
 */
class SmallQueriesTest {
  @Test
  void queriesAreReadByNameWithCommentsLeftOut() {
    Map<String, String> q =
        SmallQueries.parseQueries(
            "-- Header.\n\n-- name: a\nSELECT 1\n  FROM t\n-- a note\n\n-- name: b\nSELECT 2\n");
    assertThat(q).containsExactly(Map.entry("a", "SELECT 1\n  FROM t"), Map.entry("b", "SELECT 2"));
    assertThatThrownBy(() -> SmallQueries.parseQueries("-- name: a\nSELECT 1\n-- name: a\nX\n"))
        .hasMessageContaining("query a is named twice");
    assertThatThrownBy(() -> SmallQueries.parseQueries("SELECT 1\n"))
        .hasMessageContaining("before the first name");
  }

  @Test
  void everyQueryRunsAndTheEmptyOnesReturnNothing() {
    SparkSession spark =
        SparkSession.builder()
            .master("local[2]")
            .appName("small-queries-test")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.sql.shuffle.partitions", "4")
            .config("spark.sql.autoBroadcastJoinThreshold", "-1")
            .getOrCreate();
    try {
      SmallQueries.tables(spark, 0.2);
      Map<String, String> queries = SmallQueries.queries();
      assertThat(queries).hasSizeGreaterThanOrEqualTo(50);
      for (Map.Entry<String, String> q : queries.entrySet()) {
        Row sums = CompareJobs.checksumOf(spark.sql(q.getValue())).collectAsList().get(0);
        long rows = sums.getLong(0);
        if (q.getKey().startsWith("empty-")) {
          assertThat(rows).as(q.getKey()).isZero();
        } else {
          assertThat(rows).as(q.getKey()).isPositive();
        }
      }
    } finally {
      spark.stop();
    }
  }
}
