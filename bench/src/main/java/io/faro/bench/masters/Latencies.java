package io.faro.bench.masters;

import io.faro.bench.run.LatencySamples;
import io.faro.bench.run.LatencySummary;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The latencies of one kind of call ({@link LatencySamples}) and its failures, shared by the event
 * loops that complete the calls, and reset when a phase's measurement starts.
 */
final class Latencies {
  private LatencySamples samples = new LatencySamples(1);
  private long failures;

  synchronized void record(long nanos) {
    samples.record(nanos);
  }

  synchronized void failed() {
    failures++;
  }

  synchronized void reset() {
    samples = new LatencySamples(1);
    failures = 0;
  }

  /** Count, failures, p50 and p99 in milliseconds, for the report. */
  synchronized Map<String, Object> summary() {
    LatencySummary s = samples.summary();
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("count", s.count());
    out.put("failures", failures);
    out.put("p50_ms", Math.round(s.p50Ms() * 10) / 10.0);
    out.put("p99_ms", Math.round(s.p99Ms() * 10) / 10.0);
    return out;
  }
}
