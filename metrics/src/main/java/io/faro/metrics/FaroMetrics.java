package io.faro.metrics;

import static java.util.Objects.requireNonNull;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import com.codahale.metrics.Metric;
import com.codahale.metrics.MetricRegistry;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.SummarySnapshot;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.DoubleSupplier;
import java.util.function.ObjDoubleConsumer;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One process's metrics: a Dropwizard {@link MetricRegistry} that the code counts into, and its
 * export in the Prometheus text format (plus the JVM's and the process's own metrics, under the
 * names every JVM dashboard knows: {@code jvm_memory_used_bytes}, {@code process_open_fds}...).
 *
 * <p>Every metric belongs to a <em>family</em>: one Prometheus name, one help text, one kind, and
 * one series per set of label values. Labels are only for bounded sets (a disk, a port, a role):
 * each series is registered once, when the part it measures is built, never per request, shuffle or
 * partition. The Dropwizard registry holds every series too, under {@code name{label=value}}, so
 * that a Dropwizard reporter (JMX, a log) sees the same numbers.
 *
 * <p>Why not the client library's {@code DropwizardExports}: it turns each Dropwizard metric into a
 * metric family of its own, so two series of one name (the same counter for two disks) are rejected
 * as duplicates, and it writes no help text. Here the conversion groups series into families; the
 * text format itself is written by the client library's {@link PrometheusTextFormatWriter}.
 *
 * <p>Naming follows Prometheus: {@code faro_<component>_<what>_<unit>}; a counter is named without
 * {@code _total} (the format appends it), a latency ends in {@code _seconds}.
 *
 * <p>Thread-safe: series are registered from any thread; {@link #scrape} reads while the code
 * counts. A series that fails to read is left out of that scrape and logged; the others stay.
 */
public final class FaroMetrics {
  private static final Logger LOG = LoggerFactory.getLogger(FaroMetrics.class);
  private static final Pattern NAME = Pattern.compile("faro_[a-z][a-z0-9_]*[a-z0-9]");
  // Suffixes the text format adds itself: a name ending in one would clash with another family.
  private static final Pattern RESERVED =
      Pattern.compile(".*_(total|created|bucket|info|count|sum)");

  /**
   * The JVM's and the process's metrics: one registry per JVM, since they describe the process and
   * the client library's JVM collectors register listeners that are never removed. Every
   * process-level {@link FaroMetrics} adds them to its scrape; nothing here refers back to one.
   */
  private static final class Jvm {
    static final PrometheusRegistry REGISTRY = new PrometheusRegistry();

    static {
      JvmMetrics.builder().register(REGISTRY);
    }
  }

  private static final Pattern LABEL = Pattern.compile("[a-z][a-z0-9_]*");

  /** How a family is exported. */
  enum Kind {
    COUNTER,
    GAUGE,
    SUMMARY
  }

  private final MetricRegistry registry = new MetricRegistry();
  private final PrometheusRegistry prometheus = new PrometheusRegistry();
  private final Map<String, Family> families = new ConcurrentSkipListMap<>();
  private final boolean jvm;

  private FaroMetrics(boolean jvm) {
    this.jvm = jvm;
    prometheus.register((MultiCollector) this::collect);
  }

  /** A process's metrics: Faro's, and in each scrape the JVM's and the process's own. */
  public static FaroMetrics forProcess() {
    return new FaroMetrics(true);
  }

  /** Faro's own metrics only: for tests and for parts built without a process. */
  public static FaroMetrics standalone() {
    return new FaroMetrics(false);
  }

  /** The Dropwizard registry that holds every series. */
  public MetricRegistry registry() {
    return registry;
  }

  /**
   * A counter that the caller increments; exported as {@code name_total}.
   *
   * @param labels label names and values, alternating
   */
  public Counter counter(String name, String help, String... labels) {
    return (Counter) series(name, help, Kind.COUNTER, labels, () -> new Counter()).metric;
  }

  /** A counter whose value {@code value} reads where it is kept; it must never go down. */
  public void counter(String name, String help, DoubleSupplier value, String... labels) {
    requireNonNull(value, "value is null");
    series(name, help, Kind.COUNTER, labels, () -> (Gauge<Double>) value::getAsDouble);
  }

  /** A gauge read from {@code value} at every scrape (it must be cheap and never block). */
  public void gauge(String name, String help, DoubleSupplier value, String... labels) {
    requireNonNull(value, "value is null");
    series(name, help, Kind.GAUGE, labels, () -> (Gauge<Double>) value::getAsDouble);
  }

  /** A latency, exported as a summary in seconds: quantiles of the last minutes, count, sum. */
  public Latency latency(String name, String help, String... labels) {
    if (!name.endsWith("_seconds")) {
      throw new IllegalArgumentException("a latency's name ends in _seconds: " + name);
    }
    return (Latency) series(name, help, Kind.SUMMARY, labels, Latency::new).metric;
  }

  private Series series(
      String name, String help, Kind kind, String[] labelPairs, Supplier<Metric> create) {
    requireNonNull(help, "help is null");
    if (!NAME.matcher(name).matches() || RESERVED.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "metric name "
              + name
              + " is not faro_<component>_<what>_<unit> (no _total, _created, _bucket, _info,"
              + " _count or _sum: the format adds those)");
    }
    Labels labels = labels(name, labelPairs);
    Family family = families.computeIfAbsent(name, n -> new Family(n, help, kind));
    if (family.kind != kind || !family.help.equals(help)) {
      throw new IllegalArgumentException(
          "metric " + name + " is already a " + family.kind + " with another help text");
    }
    synchronized (family) {
      for (Series s : family.series) {
        if (s.labels.equals(labels)) {
          return s;
        }
      }
      Metric metric = create.get();
      registry.register(dropwizardName(name, labels), metric);
      Series s = new Series(labels, metric);
      family.series.add(s);
      return s;
    }
  }

  private static Labels labels(String name, String[] pairs) {
    if (pairs.length % 2 != 0) {
      throw new IllegalArgumentException(name + ": labels come as name, value pairs");
    }
    for (int i = 0; i < pairs.length; i += 2) {
      if (!LABEL.matcher(pairs[i]).matches()) {
        throw new IllegalArgumentException(name + ": bad label name " + pairs[i]);
      }
      requireNonNull(pairs[i + 1], name + ": label " + pairs[i] + " has no value");
    }
    return Labels.of(pairs);
  }

  private static String dropwizardName(String name, Labels labels) {
    if (labels.size() == 0) {
      return name;
    }
    StringBuilder out = new StringBuilder(name).append('{');
    for (int i = 0; i < labels.size(); i++) {
      out.append(i == 0 ? "" : ",")
          .append(labels.getName(i))
          .append('=')
          .append(labels.getValue(i));
    }
    return out.append('}').toString();
  }

  /** Everything this process exports, Faro's and (for a process's metrics) the JVM's. */
  public MetricSnapshots scrape() {
    MetricSnapshots own = prometheus.scrape();
    if (!jvm) {
      return own;
    }
    MetricSnapshots.Builder all = MetricSnapshots.builder();
    own.forEach(all::metricSnapshot);
    Jvm.REGISTRY.scrape().forEach(all::metricSnapshot);
    return all.build();
  }

  /** {@link #scrape} in the Prometheus text format (version 0.0.4). */
  public void writeText(OutputStream out) throws IOException {
    PrometheusTextFormatWriter.create().write(out, scrape());
  }

  /** {@link #writeText} as a string, for tests and the admin tool. */
  public String text() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try {
      writeText(out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toString(StandardCharsets.UTF_8);
  }

  /** The media type of {@link #writeText}. */
  public static String textContentType() {
    return PrometheusTextFormatWriter.CONTENT_TYPE;
  }

  private MetricSnapshots collect() {
    List<MetricSnapshot> out = new ArrayList<>(families.size());
    for (Family family : families.values()) {
      MetricSnapshot snapshot = family.snapshot();
      if (snapshot != null) {
        out.add(snapshot);
      }
    }
    return new MetricSnapshots(out);
  }

  private record Series(Labels labels, Metric metric) {}

  private static final class Family {
    final String name;
    final String help;
    final Kind kind;
    final List<Series> series = new CopyOnWriteArrayList<>();

    Family(String name, String help, Kind kind) {
      this.name = name;
      this.help = help;
      this.kind = kind;
    }

    /** The family's series as read now; null when none could be read. */
    MetricSnapshot snapshot() {
      return switch (kind) {
        case COUNTER -> counters();
        case GAUGE -> gauges();
        case SUMMARY -> summaries();
      };
    }

    /**
     * {@code s}'s value, or NaN when reading it failed: one series that fails (a disk's gauge) must
     * not cost the scrape its family or any other metric.
     */
    private double read(Series s) {
      try {
        return s.metric instanceof Counter c
            ? c.getCount()
            : ((Number) ((Gauge<?>) s.metric).getValue()).doubleValue();
      } catch (RuntimeException e) {
        LOG.warn("Metric {}{} could not be read; left out of this scrape", name, s.labels, e);
        return Double.NaN;
      }
    }

    private CounterSnapshot counters() {
      CounterSnapshot.Builder b = CounterSnapshot.builder().name(name).help(help);
      return points(
              (labels, value) ->
                  b.dataPoint(
                      CounterSnapshot.CounterDataPointSnapshot.builder()
                          .labels(labels)
                          .value(value)
                          .build()))
          ? b.build()
          : null;
    }

    private GaugeSnapshot gauges() {
      GaugeSnapshot.Builder b = GaugeSnapshot.builder().name(name).help(help);
      return points(
              (labels, value) ->
                  b.dataPoint(
                      GaugeSnapshot.GaugeDataPointSnapshot.builder()
                          .labels(labels)
                          .value(value)
                          .build()))
          ? b.build()
          : null;
    }

    /** Hands each series that could be read to {@code point}; whether any could. */
    private boolean points(ObjDoubleConsumer<Labels> point) {
      boolean any = false;
      for (Series s : series) {
        double value = read(s);
        if (!Double.isNaN(value)) {
          point.accept(s.labels, value);
          any = true;
        }
      }
      return any;
    }

    private SummarySnapshot summaries() {
      SummarySnapshot.Builder b = SummarySnapshot.builder().name(name).help(help);
      for (Series s : series) {
        b.dataPoint(((Latency) s.metric).snapshot(s.labels));
      }
      return series.isEmpty() ? null : b.build();
    }
  }
}
