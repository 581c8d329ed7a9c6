package io.faro.master;

import io.faro.common.config.ConfigOption;
import io.faro.common.config.ConfigOptionGroup;
import java.util.List;

/** The keys of the master process, for {@link io.faro.common.config.KnownKeys}. */
public final class MasterOptionGroup implements ConfigOptionGroup {
  @Override
  public List<ConfigOption<?>> options() {
    return MasterServerOptions.ALL;
  }

  @Override
  public List<String> namespaces() {
    return List.of("faro.master.");
  }
}
