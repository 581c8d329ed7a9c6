package io.faro.spark;

import io.faro.common.auth.AuthOptions;
import io.faro.common.auth.Identity;
import io.faro.common.auth.Secret;
import io.faro.common.id.AppId;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.HostPort;
import java.util.Optional;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.shuffle.BaseShuffleHandle;

/**
 * What executors need to write and read one shuffle through Faro: the app, where the driver's
 * lifecycle manager listens, the shuffle's shape and, when the cluster authenticates applications,
 * the app's identity and secret. Travels with every task, inside the task binary that Spark
 * broadcasts: with {@code spark.authenticate} and {@code spark.network.crypto.enabled} it is
 * encrypted on the way, and with {@code spark.io.encryption.enabled} wherever Spark stores it.
 */
public final class FaroShuffleHandle<K, V, C> extends BaseShuffleHandle<K, V, C> {
  private static final long serialVersionUID = 1L;

  private final String appId;
  private final String lifecycleHost;
  private final int lifecyclePort;
  private final int numMaps;
  private final int numPartitions;
  // Empty when the cluster does not authenticate applications.
  private final String appIdentity;
  private final byte[] appSecret;

  public FaroShuffleHandle(
      int shuffleId,
      ShuffleDependency<K, V, C> dependency,
      String appId,
      HostPort lifecycle,
      int numMaps,
      Optional<AuthOptions.Credentials> credentials) {
    super(shuffleId, dependency);
    this.appIdentity = credentials.map(c -> c.identity().wire()).orElse("");
    this.appSecret = credentials.flatMap(c -> c.secret()).map(Secret::toBytes).orElse(new byte[0]);
    this.appId = appId;
    this.lifecycleHost = lifecycle.host();
    this.lifecyclePort = lifecycle.port();
    this.numMaps = numMaps;
    this.numPartitions = dependency.partitioner().numPartitions();
  }

  public ShuffleId faroShuffleId() {
    return new ShuffleId(new AppId(appId), shuffleId());
  }

  public HostPort lifecycle() {
    return new HostPort(lifecycleHost, lifecyclePort);
  }

  public int numMaps() {
    return numMaps;
  }

  public int numPartitions() {
    return numPartitions;
  }

  /** What this app's executors prove to the cluster, if it authenticates applications. */
  public Optional<AuthOptions.Credentials> credentials() {
    if (appIdentity.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(
        AuthOptions.Credentials.app(Identity.fromWire(appIdentity), Secret.ofBytes(appSecret)));
  }

  @Override
  public String toString() {
    // Never the secret.
    return "FaroShuffleHandle(shuffle " + shuffleId() + " of " + appId + ")";
  }
}
