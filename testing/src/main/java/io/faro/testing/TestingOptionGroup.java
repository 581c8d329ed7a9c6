package io.faro.testing;

import io.faro.common.config.ConfigOption;
import io.faro.common.config.ConfigOptionGroup;
import java.util.List;

/**
 * The keys of the faro-testing module, for {@link io.faro.common.config.KnownKeys}: where the
 * module is loaded, a misspelt {@code faro.testing.*} key is unknown.
 */
public final class TestingOptionGroup implements ConfigOptionGroup {
  @Override
  public List<ConfigOption<?>> options() {
    return TestingOptions.ALL;
  }

  @Override
  public List<String> namespaces() {
    return List.of("faro.testing.");
  }
}
