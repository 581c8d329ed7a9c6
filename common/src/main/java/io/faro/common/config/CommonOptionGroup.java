package io.faro.common.config;

import io.faro.common.auth.AuthOptions;
import io.faro.common.master.MasterOptions;
import io.faro.common.network.NetworkOptions;
import io.faro.common.tls.TlsOptions;
import java.util.ArrayList;
import java.util.List;

/** The options common declares: the network, reaching the masters, and config checking. */
public final class CommonOptionGroup implements ConfigOptionGroup {
  @Override
  public List<ConfigOption<?>> options() {
    List<ConfigOption<?>> all = new ArrayList<>();
    all.addAll(NetworkOptions.ALL);
    all.addAll(AuthOptions.ALL);
    all.addAll(TlsOptions.ALL);
    all.addAll(MasterOptions.ALL);
    all.addAll(KnownKeys.ALL);
    return List.copyOf(all);
  }

  @Override
  public List<String> namespaces() {
    return List.of(
        "faro.network.", "faro.auth.", "faro.tls.", "faro.config.", "faro.master.client.");
  }
}
