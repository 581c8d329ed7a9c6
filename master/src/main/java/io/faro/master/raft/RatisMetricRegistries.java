package io.faro.master.raft;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.ratis.metrics.LongCounter;
import org.apache.ratis.metrics.MetricRegistries;
import org.apache.ratis.metrics.MetricRegistryInfo;
import org.apache.ratis.metrics.RatisMetricRegistry;
import org.apache.ratis.metrics.Timekeeper;
import org.apache.ratis.util.TimeDuration;

/**
 * Ratis' metrics, kept in Dropwizard registries (the library Faro's metrics use), so that the
 * master's metrics exporter can publish Raft metrics with its own.
 *
 * <p>Ratis requires one implementation of its {@link MetricRegistries} SPI on the class path and
 * creates it once per JVM through {@code ServiceLoader} (registered in
 * META-INF/services/org.apache.ratis.metrics.MetricRegistries). This is the one JVM-wide object of
 * the master, imposed by Ratis; it is safe with several masters in one JVM because Ratis names each
 * registry after the Raft member (its prefix). Thread-safe.
 */
public final class RatisMetricRegistries extends MetricRegistries {
  private final Map<MetricRegistryInfo, Registry> registries = new ConcurrentHashMap<>();
  private final List<Consumer<RatisMetricRegistry>> onAdd = new CopyOnWriteArrayList<>();
  private final List<Consumer<RatisMetricRegistry>> onRemove = new CopyOnWriteArrayList<>();

  /** Called by Ratis through ServiceLoader. */
  public RatisMetricRegistries() {}

  @Override
  public void clear() {
    registries.keySet().forEach(this::remove);
  }

  @Override
  public RatisMetricRegistry create(MetricRegistryInfo info) {
    return registries.computeIfAbsent(
        info,
        i -> {
          Registry registry = new Registry(i);
          onAdd.forEach(listener -> listener.accept(registry));
          return registry;
        });
  }

  @Override
  public boolean remove(MetricRegistryInfo info) {
    Registry removed = registries.remove(info);
    if (removed != null) {
      onRemove.forEach(listener -> listener.accept(removed));
    }
    return removed != null;
  }

  @Override
  public Optional<RatisMetricRegistry> get(MetricRegistryInfo info) {
    return Optional.ofNullable(registries.get(info));
  }

  @Override
  public Set<MetricRegistryInfo> getMetricRegistryInfos() {
    return Set.copyOf(registries.keySet());
  }

  @Override
  public Collection<RatisMetricRegistry> getMetricRegistries() {
    return List.copyOf(registries.values());
  }

  @Override
  public void addReporterRegistration(
      Consumer<RatisMetricRegistry> reporterRegistration,
      Consumer<RatisMetricRegistry> stopReporter) {
    onAdd.add(reporterRegistration);
    onRemove.add(stopReporter);
  }

  @Override
  public void removeReporterRegistration(
      Consumer<RatisMetricRegistry> reporterRegistration,
      Consumer<RatisMetricRegistry> stopReporter) {
    onAdd.remove(reporterRegistration);
    onRemove.remove(stopReporter);
  }

  /** Faro exports metrics over HTTP itself; Ratis' own JMX and console reporters stay off. */
  @Override
  public void enableJmxReporter() {}

  @Override
  public void enableConsoleReporter(TimeDuration consoleReportRate) {}

  /** One Ratis registry over one Dropwizard registry. */
  public static final class Registry implements RatisMetricRegistry {
    private final MetricRegistryInfo info;
    private final MetricRegistry metrics = new MetricRegistry();

    Registry(MetricRegistryInfo info) {
      this.info = info;
    }

    /** The Dropwizard registry holding this Ratis registry's metrics, for an exporter. */
    public MetricRegistry dropwizard() {
      return metrics;
    }

    @Override
    public Timekeeper timer(String name) {
      Timer timer = metrics.timer(name);
      return () -> timer.time()::stop;
    }

    @Override
    public LongCounter counter(String name) {
      Counter counter = metrics.counter(name);
      return new LongCounter() {
        @Override
        public void inc(long n) {
          counter.inc(n);
        }

        @Override
        public void dec(long n) {
          counter.dec(n);
        }

        @Override
        public long getCount() {
          return counter.getCount();
        }
      };
    }

    @Override
    public boolean remove(String name) {
      return metrics.remove(name);
    }

    @Override
    public <T> void gauge(String name, Supplier<Supplier<T>> gaugeSupplier) {
      // Ratis registers some gauges again on each election; the newest supplier wins.
      metrics.remove(name);
      Supplier<T> value = gaugeSupplier.get();
      metrics.register(name, (Gauge<T>) value::get);
    }

    @Override
    public MetricRegistryInfo getMetricRegistryInfo() {
      return info;
    }
  }
}
