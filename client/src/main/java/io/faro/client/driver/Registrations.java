package io.faro.client.driver;

import static java.util.Objects.requireNonNull;

import io.faro.client.ClientSettings;
import io.faro.client.protocol.DriverProto;
import io.faro.common.master.MasterClient;
import io.faro.common.network.Futures;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the engine's register and unregister of a shuffle do on the driver. Register makes the
 * shuffle's first generation and, with faro.client.placement.at.register, places it in the
 * background: whole when it has a few pages, else nothing (or its first page, to probe whether the
 * cluster takes it), as its map tasks then place the pages they push to. Unregister forgets every
 * generation and tells the master, after any placement under way ended.
 */
final class Registrations {
  // The lifecycle manager's log lines keep its name.
  private static final Logger LOG = LoggerFactory.getLogger(LifecycleManager.class);

  /**
   * Most pages of a shuffle placed when Spark registers it (65,536 partitions with the default
   * faro.client.partitions.per.page): a wider shuffle's map tasks place the pages they push to, so
   * that one of a million mostly empty partitions holds slots only where data goes.
   */
  static final int PAGES_PLACED_AT_REGISTER = 4;

  private final ClientSettings settings;
  private final MasterClient master;
  private final Generations generations;
  private final Placement placement;
  private final Committer committer;

  Registrations(
      ClientSettings settings,
      MasterClient master,
      Generations generations,
      Placement placement,
      Committer committer) {
    this.settings = requireNonNull(settings, "settings is null");
    this.master = requireNonNull(master, "master is null");
    this.generations = requireNonNull(generations, "generations is null");
    this.placement = requireNonNull(placement, "placement is null");
    this.committer = requireNonNull(committer, "committer is null");
  }

  /** See {@link LifecycleManager#registerShuffle(int, int, int, boolean)}. */
  CompletableFuture<Void> register(
      int shuffleId, int numMaps, int numPartitions, boolean probeWide) {
    if (numMaps <= 0 || numPartitions <= 0) {
      // No map task will ever ask (an empty RDD), or a shape the first request refuses.
      return CompletableFuture.completedFuture(null);
    }
    Generation g;
    try {
      g = generations.forRegistration(shuffleId, numMaps, numPartitions);
    } catch (RuntimeException e) {
      LOG.debug("Shuffle {} is not placed at registration: {}", shuffleId, e.toString());
      return CompletableFuture.failedFuture(e);
    }
    if (g == null || !g.timeline().mark(ShuffleTimeline.Mark.REGISTERED)) {
      return CompletableFuture.completedFuture(null);
    }
    // A shuffle of a few pages is placed whole; a wider one page by page, as its maps push to each.
    if (!settings.placeAtRegister()) {
      return CompletableFuture.completedFuture(null);
    }
    boolean wide = g.pages().count(numPartitions) > PAGES_PLACED_AT_REGISTER;
    if (wide && !probeWide) {
      return CompletableFuture.completedFuture(null);
    }
    CompletableFuture<Void> placed =
        placement.place(g, 0, wide ? g.pages().end(0, numPartitions) : numPartitions);
    placed.whenComplete(
        (v, error) -> {
          if (error != null) {
            LOG.info(
                "Shuffle {} could not be placed at registration; its first map task asks"
                    + " again: {}",
                g.id(),
                Futures.unwrap(error).toString());
          }
        });
    return placed;
  }

  /** Forgets the shuffle; the master frees its slots and the workers delete its files. */
  void unregister(int shuffleId) {
    for (Generation g : generations.remove(shuffleId)) {
      committer.forget(g);
      // After any placement under way (one started at registration may still be): a slot request
      // the master applied after the unregister would make it hold the shuffle again.
      g.placementsEnded()
          .thenCompose(v -> DriverProto.unregisterShuffle(master, g.id()))
          .whenComplete(
              (r, e) -> {
                if (e != null) {
                  LOG.warn(
                      "Unregistering shuffle {} failed; the master frees it with the app: {}",
                      g.id(),
                      Futures.unwrap(e).toString());
                }
              });
    }
  }
}
