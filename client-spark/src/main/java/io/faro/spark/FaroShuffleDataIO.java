package io.faro.spark;

import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.shuffle.api.ShuffleDataIO;
import org.apache.spark.shuffle.api.ShuffleDriverComponents;
import org.apache.spark.shuffle.api.ShuffleExecutorComponents;
import org.apache.spark.shuffle.sort.io.LocalDiskShuffleDataIO;

/**
 * Tells Spark that shuffle data outlives executors ({@code
 * spark.shuffle.sort.io.plugin.class=io.faro.spark.FaroShuffleDataIO}, which {@link
 * FaroShuffleManager} sets on the driver unless the user set another). With it, dynamic allocation
 * runs without Spark's external shuffle service and releases idle executors although they ran map
 * tasks: a Faro map output lives on Faro's workers, and its map status names no executor. Faro's
 * writers and readers use none of this plugin; what Spark's own sort shuffle would use of it (the
 * executors' local-disk writers, for the shuffles that fell back) is Spark's default.
 *
 * <p>The storage is reliable only while every live shuffle is Faro's: once one falls back (see
 * {@link FaroShuffleManager}), its files live on executors, and Spark must treat a lost executor as
 * lost map outputs (it unregisters them and runs the maps again) until that shuffle is gone. Spark
 * asks at each executor loss; dynamic allocation asks once, at start, when nothing fell back yet.
 */
public final class FaroShuffleDataIO implements ShuffleDataIO {
  private final LocalDiskShuffleDataIO local;

  public FaroShuffleDataIO(SparkConf conf) {
    this.local = new LocalDiskShuffleDataIO(conf);
  }

  @Override
  public ShuffleExecutorComponents executor() {
    return local.executor();
  }

  @Override
  public ShuffleDriverComponents driver() {
    ShuffleDriverComponents delegate = local.driver();
    return new ShuffleDriverComponents() {
      @Override
      public Map<String, String> initializeApplication() {
        return delegate.initializeApplication();
      }

      @Override
      public void cleanupApplication() {
        delegate.cleanupApplication();
      }

      @Override
      public void registerShuffle(int shuffleId) {
        delegate.registerShuffle(shuffleId);
      }

      @Override
      public void removeShuffle(int shuffleId, boolean blocking) {
        delegate.removeShuffle(shuffleId, blocking);
      }

      @Override
      public boolean supportsReliableStorage() {
        SparkEnv env = SparkEnv.get();
        return env != null
            && env.shuffleManager() instanceof FaroShuffleManager faro
            && faro.noLiveFallbacks();
      }
    };
  }
}
