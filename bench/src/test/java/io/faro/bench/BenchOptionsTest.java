package io.faro.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.StringWriter;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** A bad option stops `faro bench` before anything starts, with a message that names it. */
class BenchOptionsTest {
  static Stream<Arguments> badOptions() {
    return Stream.of(
        Arguments.of(new String[] {}, "--masters"),
        Arguments.of(
            new String[] {"--local-cluster", "--masters", "127.0.0.1:9097"}, "--local-cluster"),
        Arguments.of(new String[] {"--masters", "no-port-here"}, "--masters"),
        Arguments.of(new String[] {"--masters", "127.0.0.1:9097", "--workers", "2"}, "--workers"),
        Arguments.of(new String[] {"--local-cluster", "--workers", "0"}, "--workers"),
        Arguments.of(new String[] {"--local-cluster", "--maps", "0"}, "--maps"),
        Arguments.of(new String[] {"--local-cluster", "--maps", "many"}, "--maps"),
        Arguments.of(new String[] {"--local-cluster", "--partitions", "-1"}, "--partitions"),
        Arguments.of(new String[] {"--local-cluster", "--total-bytes", "lots"}, "--total-bytes"),
        Arguments.of(
            new String[] {"--local-cluster", "--total-bytes", "10", "--record-size", "100"},
            "--total-bytes"),
        Arguments.of(new String[] {"--local-cluster", "--record-size", "4"}, "--record-size"),
        Arguments.of(new String[] {"--local-cluster", "--warmup", "10"}, "--warmup"),
        Arguments.of(new String[] {"--local-cluster", "--data", "zeros"}, "--data"),
        Arguments.of(new String[] {"--local-cluster", "--codec", "brotli"}, "--codec"),
        Arguments.of(new String[] {"--local-cluster", "--threads", "0"}, "--threads"),
        Arguments.of(new String[] {"--local-cluster", "--timeout", "soon"}, "--timeout"),
        Arguments.of(new String[] {"--local-cluster", "--set", "spark.master=local"}, "--set"),
        Arguments.of(
            new String[] {"--local-cluster", "--set", "faro.client.push.batch.size=tiny"},
            "faro.client.push.batch.size"),
        Arguments.of(new String[] {"--local-cluster", "--conf", "/no/such/faro.conf"}, "--conf"));
  }

  @ParameterizedTest
  @MethodSource("badOptions")
  void namesTheOptionAtFault(String[] args, String option) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();

    int code = BenchCommandTest.execute(out, err, args);

    assertThat(code).isEqualTo(2);
    assertThat(err.toString()).contains(option);
  }
}
