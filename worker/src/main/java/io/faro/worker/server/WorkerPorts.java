package io.faro.worker.server;

import io.faro.common.network.FrameDecoder;
import io.faro.common.network.NetworkSettings;
import io.faro.common.network.RequestHandler;
import io.faro.common.network.RequestObserver;
import io.faro.common.network.TransportServer;
import io.faro.common.version.ClusterLevel;
import io.faro.metrics.FaroMetrics;
import io.faro.metrics.RequestMetrics;
import io.faro.proto.MessageType;
import io.faro.worker.WorkerOptions;
import io.faro.worker.WorkerSettings;
import io.faro.worker.control.ControlHandler;
import io.faro.worker.extension.WorkerExtensions;
import io.faro.worker.fetch.FetchHandler;
import io.faro.worker.memory.MemoryBudget;
import io.faro.worker.partition.PartitionStore;
import io.faro.worker.push.FrameAppender;
import io.faro.worker.push.PushHandler;
import io.faro.worker.storage.ReadAhead;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The worker's three servers, each on its own port with its own event loops, so that paused push
 * connections never stall control or fetch traffic: control RPCs ({@link ControlHandler}), pushes
 * ({@link PushHandler}, frames charged to the memory budget) and fetches ({@link FetchHandler}).
 * Closed in the order pushes, fetches, control.
 */
final class WorkerPorts implements AutoCloseable {
  final TransportServer rpc;
  final TransportServer push;
  final TransportServer fetch;

  private WorkerPorts(TransportServer rpc, TransportServer push, TransportServer fetch) {
    this.rpc = rpc;
    this.push = push;
    this.fetch = fetch;
  }

  /**
   * Binds the three servers with {@code network} (its authentication naming this worker), the push
   * and fetch handlers wrapped by {@code extensions}; a server that cannot bind closes the ones
   * bound before it.
   */
  static WorkerPorts start(
      WorkerSettings settings,
      WorkerExtensions extensions,
      NetworkSettings network,
      ControlHandler control,
      PartitionStore store,
      MemoryBudget budget,
      FaroMetrics metrics,
      ClusterLevel level) {
    List<TransportServer> bound = new ArrayList<>(3);
    try {
      TransportServer rpc =
          new TransportServer(
              "faro-worker-rpc",
              settings.ports().bindHost(),
              settings.ports().rpcPort(),
              WorkerOptions.RPC_PORT.key(),
              network,
              RequestHandler.requiring(control, level::oldestProtocol),
              null,
              FrameDecoder.Bodies.CONTIGUOUS,
              null,
              requests(settings, metrics, "rpc", ControlHandler.SERVED));
      bound.add(rpc);
      TransportServer push =
          new TransportServer(
              "faro-worker-push",
              settings.ports().bindHost(),
              settings.ports().pushPort(),
              WorkerOptions.PUSH_PORT.key(),
              network,
              RequestHandler.requiring(
                  extensions.wrapPush(new PushHandler(new FrameAppender(store, budget))),
                  level::oldestProtocol),
              budget::register,
              FrameDecoder.Bodies.COMPOSITE,
              budget::partialFrames,
              requests(settings, metrics, "push", List.of(MessageType.PUSH_REQUEST)));
      bound.add(push);
      ReadAhead.Limits readAhead =
          new ReadAhead.Limits(
              settings.storage().readAheadFiles(), settings.storage().readAheadBytes());
      TransportServer fetch =
          new TransportServer(
              "faro-worker-fetch",
              settings.ports().bindHost(),
              settings.ports().fetchPort(),
              WorkerOptions.FETCH_PORT.key(),
              network,
              RequestHandler.requiring(
                  extensions.wrapFetch(
                      new FetchHandler(store, readAhead, settings.storage().fetchZeroCopy())),
                  level::oldestProtocol),
              null,
              FrameDecoder.Bodies.CONTIGUOUS,
              null,
              requests(settings, metrics, "fetch", FetchHandler.SERVED));
      bound.add(fetch);
      return new WorkerPorts(rpc, push, fetch);
    } catch (RuntimeException e) {
      bound.forEach(TransportServer::close);
      throw e;
    }
  }

  private static RequestObserver requests(
      WorkerSettings settings, FaroMetrics metrics, String port, List<MessageType> served) {
    return settings.ports().metricsEnabled()
        ? new RequestMetrics(metrics, "faro_worker", port, served)
        : RequestObserver.NONE;
  }

  /** The servers by the name their metrics carry. */
  Map<String, TransportServer> byName() {
    return Map.of("rpc", rpc, "push", push, "fetch", fetch);
  }

  @Override
  public void close() {
    try {
      push.close();
    } finally {
      try {
        fetch.close();
      } finally {
        rpc.close();
      }
    }
  }
}
