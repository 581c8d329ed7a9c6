package io.faro.client;

import io.faro.common.config.ConfigOption;
import io.faro.common.config.ConfigOptionGroup;
import java.util.List;

/**
 * The keys of the client (lifecycle manager and shuffle client), for {@link
 * io.faro.common.config.KnownKeys}.
 */
public final class ClientOptionGroup implements ConfigOptionGroup {
  @Override
  public List<ConfigOption<?>> options() {
    return ClientOptions.ALL;
  }

  @Override
  public List<String> namespaces() {
    return List.of("faro.client.");
  }
}
