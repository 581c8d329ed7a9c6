package io.faro.worker;

import io.faro.common.config.ConfigOption;
import io.faro.common.config.ConfigOptionGroup;
import java.util.List;

/** The keys of the worker process, for {@link io.faro.common.config.KnownKeys}. */
public final class WorkerOptionGroup implements ConfigOptionGroup {
  @Override
  public List<ConfigOption<?>> options() {
    return WorkerOptions.ALL;
  }

  @Override
  public List<String> namespaces() {
    return List.of("faro.worker.");
  }
}
