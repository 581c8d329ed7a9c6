package io.faro.spark;

import io.faro.client.EngineShuffleId;
import io.faro.common.auth.AuthOptions;
import io.faro.common.auth.Identity;
import io.faro.common.auth.Secret;
import io.faro.common.id.AppId;
import io.faro.common.network.HostPort;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.shuffle.BaseShuffleHandle;

/**
 * What executors need to write and read one shuffle through Faro: the app, where the driver's
 * lifecycle manager listens, the shuffle's shape, and the app's identity and secret: the
 * registration's when the cluster authenticates applications (executors prove it to every master
 * and worker), else one the driver made, which they prove to its lifecycle port only. Travels with
 * every task, inside the task binary that Spark broadcasts: with {@code spark.authenticate} and
 * {@code spark.network.crypto.enabled} it is encrypted on the way, and with {@code
 * spark.io.encryption.enabled} wherever Spark stores it.
 */
public final class FaroShuffleHandle<K, V, C> extends BaseShuffleHandle<K, V, C> {
  private static final long serialVersionUID = 2L;

  private final String appId;
  private final String lifecycleHost;
  private final int lifecyclePort;
  private final int numMaps;
  private final int numPartitions;
  private final String appIdentity;
  private final byte[] appSecret;
  // Whether the identity proves the app to the whole cluster, or to the lifecycle port only.
  private final boolean clusterAuthenticates;

  public FaroShuffleHandle(
      int shuffleId,
      ShuffleDependency<K, V, C> dependency,
      String appId,
      HostPort lifecycle,
      int numMaps,
      AuthOptions.Credentials credentials,
      boolean clusterAuthenticates) {
    super(shuffleId, dependency);
    this.appIdentity = credentials.identity().wire();
    this.appSecret = credentials.secret().map(Secret::toBytes).orElseThrow();
    this.clusterAuthenticates = clusterAuthenticates;
    this.appId = appId;
    this.lifecycleHost = lifecycle.host();
    this.lifecyclePort = lifecycle.port();
    this.numMaps = numMaps;
    this.numPartitions = dependency.partitioner().numPartitions();
  }

  /** The engine's shuffle; the lifecycle manager answers with the generation to write or read. */
  public EngineShuffleId engineShuffle() {
    return new EngineShuffleId(new AppId(appId), shuffleId());
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

  /**
   * What this app's executors prove to the driver's lifecycle port and, when {@link
   * #clusterAuthenticates}, to every master and worker.
   */
  public AuthOptions.Credentials credentials() {
    return AuthOptions.Credentials.app(Identity.fromWire(appIdentity), Secret.ofBytes(appSecret));
  }

  /** Whether the cluster authenticates applications (see {@link #credentials}). */
  public boolean clusterAuthenticates() {
    return clusterAuthenticates;
  }

  @Override
  public String toString() {
    // Never the secret.
    return "FaroShuffleHandle(shuffle " + shuffleId() + " of " + appId + ")";
  }
}
