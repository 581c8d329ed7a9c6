package io.faro.cli;

import io.faro.common.auth.AuthOptions;
import io.faro.common.auth.AuthSettings;
import io.faro.common.auth.Handshake;
import io.faro.common.auth.Identity;
import io.faro.common.config.ConfigOption;
import io.faro.common.config.FaroConf;
import io.faro.common.master.MasterOptions;
import io.faro.common.network.ClientPool;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkOptions;
import io.faro.common.network.NetworkSettings;
import io.faro.common.process.ServerProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine.Option;

/**
 * Where the masters are and how an admin command reaches them: --endpoints, else
 * faro.master.endpoints from --conf / --set, and the admin secret of --conf when it names one.
 */
final class AdminEndpoints {
  @Option(
      names = "--endpoints",
      split = ",",
      paramLabel = "HOST:PORT",
      description = "Every master's RPC endpoint (default: faro.master.endpoints of --conf).")
  List<String> endpoints = new ArrayList<>();

  @Option(
      names = "--conf",
      paramLabel = "FILE",
      description =
          "Settings file, e.g. conf/faro-defaults.conf. With faro.auth.enabled, the secret of its"
              + " faro.auth.admin.secret.file is proved to masters and workers (state changes"
              + " need it).")
  Path confFile;

  @Option(names = "--set", paramLabel = "KEY=VALUE", description = "A faro.* setting; repeatable.")
  Map<String, String> overrides = new LinkedHashMap<>();

  @Option(
      names = "--timeout",
      defaultValue = "10s",
      paramLabel = "DURATION",
      description = "How long to wait for each master (default: ${DEFAULT-VALUE}).")
  String timeout;

  FaroConf conf() {
    return ServerProcess.configuration(confFile, overrides);
  }

  List<HostPort> resolve() {
    return resolve(conf());
  }

  private List<HostPort> resolve(FaroConf conf) {
    if (!endpoints.isEmpty()) {
      return endpoints.stream()
          .map(String::trim)
          .filter(s -> !s.isEmpty())
          .map(HostPort::parse)
          .toList();
    }
    if (conf.raw(MasterOptions.ENDPOINTS.key()).isEmpty()) {
      throw new IllegalArgumentException(
          "name the masters with --endpoints host:port,... or with "
              + MasterOptions.ENDPOINTS.key()
              + " in --conf FILE");
    }
    return conf.get(MasterOptions.ENDPOINTS);
  }

  Duration timeout() {
    return ConfigOption.parseDuration(timeout);
  }

  /**
   * A pool that proves the admin secret when --conf names one (faro.auth.admin.secret.file), to the
   * masters and to a worker's RPC port (stop-worker), each named as such in the handshake.
   */
  ClientPool pool() {
    FaroConf conf = conf();
    NetworkSettings network = NetworkSettings.from(conf.with(NetworkOptions.IO_THREADS, "1"));
    AuthSettings auth = network.auth();
    Set<HostPort> masters =
        endpoints.isEmpty() && conf.raw(MasterOptions.ENDPOINTS.key()).isEmpty()
            ? Set.of()
            : Set.copyOf(resolve(conf));
    return new ClientPool(
        "faro-admin",
        network,
        auth.admin().isPresent()
            ? AuthOptions.Credentials.as(Identity.ADMIN, auth)
            : AuthOptions.Credentials.NONE,
        address ->
            masters.contains(address)
                ? Handshake.MASTER
                : Handshake.worker(address.host(), address.port()));
  }
}
