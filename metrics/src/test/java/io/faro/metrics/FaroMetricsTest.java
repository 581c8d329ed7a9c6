package io.faro.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.codahale.metrics.Counter;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class FaroMetricsTest {
  @Test
  void seriesOfOneNameShareAFamilyWithHelpAndLabels() {
    FaroMetrics metrics = FaroMetrics.standalone();
    Counter disk1 = metrics.counter("faro_worker_flushed_bytes", "Bytes flushed.", "disk", "/d1");
    Counter disk2 = metrics.counter("faro_worker_flushed_bytes", "Bytes flushed.", "disk", "/d2");
    disk1.inc(1000);
    disk2.inc(24);

    String text = metrics.text();

    assertThat(text)
        .contains("# HELP faro_worker_flushed_bytes_total Bytes flushed.\n")
        .contains("# TYPE faro_worker_flushed_bytes_total counter\n")
        .contains("faro_worker_flushed_bytes_total{disk=\"/d1\"} 1000.0\n")
        .contains("faro_worker_flushed_bytes_total{disk=\"/d2\"} 24.0\n");
    assertThat(metrics.registry().getNames())
        .contains("faro_worker_flushed_bytes{disk=/d1}", "faro_worker_flushed_bytes{disk=/d2}");
  }

  @Test
  void registeringASeriesTwiceGivesTheSameOne() {
    FaroMetrics metrics = FaroMetrics.standalone();
    Counter first = metrics.counter("faro_master_things", "Things.");
    Counter again = metrics.counter("faro_master_things", "Things.");
    assertThat(again).isSameAs(first);
    assertThatThrownBy(() -> metrics.gauge("faro_master_things", "Things.", () -> 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("already a COUNTER");
  }

  @Test
  void gaugesAndCountersReadWhereTheValueIsKept() {
    FaroMetrics metrics = FaroMetrics.standalone();
    AtomicLong kept = new AtomicLong(7);
    metrics.counter("faro_worker_pauses", "Pauses.", kept::get);
    metrics.gauge("faro_worker_budget_used_bytes", "Used.", () -> 12.5, "pool", "push");

    kept.set(9);

    assertThat(metrics.text())
        .contains("faro_worker_pauses_total 9.0\n")
        .contains("# TYPE faro_worker_budget_used_bytes gauge\n")
        .contains("faro_worker_budget_used_bytes{pool=\"push\"} 12.5\n");
  }

  @Test
  void aLatencyIsASummaryInSecondsWithCountAndSum() {
    FaroMetrics metrics = FaroMetrics.standalone();
    Latency push = metrics.latency("faro_worker_push_seconds", "Push time.", "port", "push");
    push.record(2_000_000);
    push.record(4_000_000);

    String text = metrics.text();

    assertThat(text)
        .contains("# TYPE faro_worker_push_seconds summary\n")
        .contains("faro_worker_push_seconds_count{port=\"push\"} 2\n")
        .contains("faro_worker_push_seconds_sum{port=\"push\"} 0.006\n")
        .containsPattern("faro_worker_push_seconds\\{port=\"push\",quantile=\"0.99\"} 0.004");
    assertThatThrownBy(() -> metrics.latency("faro_worker_push_millis", "x"))
        .hasMessageContaining("_seconds");
  }

  @Test
  void aProcessAlsoExportsTheJvmAndProcessMetrics() {
    String text = FaroMetrics.forProcess().text();
    assertThat(FaroMetrics.standalone().text()).doesNotContain("jvm_");
    assertThat(text)
        .contains("jvm_memory_used_bytes{area=\"heap\"}")
        .contains("jvm_buffer_pool_used_bytes{pool=\"direct\"}")
        .contains("jvm_threads_current")
        .contains("process_cpu_seconds_total")
        .contains("process_open_fds");
  }

  @Test
  void namesAndLabelsAreChecked() {
    FaroMetrics metrics = FaroMetrics.standalone();
    assertThatThrownBy(() -> metrics.counter("worker_bytes", "x"))
        .hasMessageContaining("faro_<component>");
    for (String reserved : new String[] {"_total", "_created", "_bucket", "_info", "_count"}) {
      assertThatThrownBy(() -> metrics.counter("faro_worker_bytes" + reserved, "x"))
          .hasMessageContaining("no _total");
    }
    assertThatThrownBy(() -> metrics.counter("faro_worker_bytes", "x", "disk"))
        .hasMessageContaining("pairs");
    assertThatThrownBy(() -> metrics.counter("faro_worker_bytes", "x", "Disk", "a"))
        .hasMessageContaining("bad label name");
  }

  @Test
  void aGaugeThatFailsCostsOnlyItself() {
    FaroMetrics metrics = FaroMetrics.standalone();
    metrics.gauge(
        "faro_worker_broken",
        "Fails.",
        () -> {
          throw new IllegalStateException("boom");
        });
    metrics.counter("faro_worker_fine", "Fine.").inc();
    assertThat(metrics.text()).contains("faro_worker_fine_total 1.0").doesNotContain("broken");
  }
}
