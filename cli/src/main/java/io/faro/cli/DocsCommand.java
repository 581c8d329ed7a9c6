package io.faro.cli;

import io.faro.client.ClientOptions;
import io.faro.common.auth.AuthOptions;
import io.faro.common.config.ConfigDocs;
import io.faro.common.config.ConfigOption;
import io.faro.common.config.KnownKeys;
import io.faro.common.master.MasterOptions;
import io.faro.common.network.NetworkOptions;
import io.faro.common.tls.TlsOptions;
import io.faro.master.MasterServerOptions;
import io.faro.worker.WorkerOptions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** {@code faro docs}: prints generated documentation (docs/configuration.md). */
@Command(
    name = "docs",
    mixinStandardHelpOptions = true,
    description = "Prints docs/configuration.md, generated from every option class.")
final class DocsCommand implements Callable<Integer> {
  /** Every option of every module, grouped as the docs present them. */
  static Map<String, List<ConfigOption<?>>> allOptions() {
    Map<String, List<ConfigOption<?>>> groups = new LinkedHashMap<>();
    groups.put("Config files (every process)", List.copyOf(KnownKeys.ALL));
    groups.put("Reaching the masters (every process)", List.copyOf(MasterOptions.ALL));
    groups.put("Network (every process)", List.copyOf(NetworkOptions.ALL));
    groups.put("Authentication (masters, workers, bin/faro admin)", List.copyOf(AuthOptions.ALL));
    groups.put(
        "Encryption (every process, Spark applications included)", List.copyOf(TlsOptions.ALL));
    groups.put("Master", List.copyOf(MasterServerOptions.ALL));
    groups.put("Worker", List.copyOf(WorkerOptions.ALL));
    groups.put("Client (Spark: spark.faro.client.*)", List.copyOf(ClientOptions.ALL));
    return groups;
  }

  static String configurationMarkdown() {
    return ConfigDocs.render(allOptions());
  }

  @Override
  public Integer call() {
    System.out.print(configurationMarkdown());
    return 0;
  }
}
