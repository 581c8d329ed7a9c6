package io.faro.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.spark.sql.RowFactory;
import org.junit.jupiter.api.Test;

/** The parts of {@link CompareJobs} that need no SparkContext: arguments, checksum, sizes. */
class CompareJobsTest {
  @Test
  void theChecksumIsTheSumOfTheHashesModulo2To64AndTheCount() {
    // Two rows whose hash is -1 (all 64 bits set): each half sums to 2 * 0xFFFFFFFF, and the
    // recombined sum wraps to -2.
    long halves = 2 * 0xFFFF_FFFFL;
    assertThat(CompareJobs.checksum(RowFactory.create(2L, halves, halves)))
        .isEqualTo("fffffffffffffffe:2");
    assertThat(CompareJobs.checksum(RowFactory.create(1L, 0L, 7L))).isEqualTo("0000000000000007:1");
  }

  @Test
  void anEmptyResultHasAZeroChecksum() {
    // Spark's sum over no rows is null.
    assertThat(CompareJobs.checksum(RowFactory.create(0L, null, null)))
        .isEqualTo("0000000000000000:0");
  }

  @Test
  void argumentsAreParsedAndCheckedBeforeSparkStarts() {
    CompareJobs.Options options =
        CompareJobs.Options.parse(
            new String[] {
              "--job",
              "small-blocks",
              "--mode",
              "faro",
              "--master-endpoints",
              "127.0.0.1:9097",
              "--scale",
              "0.5",
              "--conf",
              "spark.a=b=c"
            });
    assertThat(options.job()).isEqualTo(ComparisonJob.SMALL_BLOCKS);
    assertThat(options.scale()).isEqualTo(0.5);
    assertThat(options.extraConf()).containsEntry("spark.a", "b=c");

    assertThatThrownBy(
            () -> CompareJobs.Options.parse(new String[] {"--job", "large", "--mode", "faro"}))
        .hasMessageContaining("--master-endpoints");
    assertThatThrownBy(
            () -> CompareJobs.Options.parse(new String[] {"--job", "huge", "--mode", "builtin"}))
        .hasMessageContaining("unknown job 'huge'");
    assertThatThrownBy(
            () ->
                CompareJobs.Options.parse(
                    new String[] {"--job", "sql", "--mode", "builtin", "--scale", "0"}))
        .hasMessageContaining("--scale must be positive");
    assertThatThrownBy(() -> CompareJobs.Options.parse(new String[] {"--job", "sql", "--mode"}))
        .hasMessageContaining("missing value of --mode");
  }

  @Test
  void blocksScaleLinearlyWithTheScaleAndTaskCountsNeverFallBelowTwo() {
    assertThat(JobScale.tasks(400, 1) * JobScale.tasks(1000, 1)).isEqualTo(400_000);
    assertThat(JobScale.tasks(400, 0.01) * JobScale.tasks(1000, 0.01)).isEqualTo(4_000);
    assertThat(JobScale.records(4_000_000, 0.01)).isEqualTo(40_000);
    assertThat(JobScale.tasks(48, 0.0001)).isEqualTo(2);
  }
}
