package io.faro.spark;

import io.faro.common.id.AppId;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.HostPort;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.shuffle.BaseShuffleHandle;

/**
 * What executors need to write and read one shuffle through Faro: the app, where the driver's
 * lifecycle manager listens, and the shuffle's shape. Travels with every task.
 */
public final class FaroShuffleHandle<K, V, C> extends BaseShuffleHandle<K, V, C> {
  private static final long serialVersionUID = 1L;

  private final String appId;
  private final String lifecycleHost;
  private final int lifecyclePort;
  private final int numMaps;
  private final int numPartitions;

  public FaroShuffleHandle(
      int shuffleId,
      ShuffleDependency<K, V, C> dependency,
      String appId,
      HostPort lifecycle,
      int numMaps) {
    super(shuffleId, dependency);
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
}
