package io.faro.worker.testing;

import io.faro.common.config.FaroConf;
import io.faro.common.error.ErrorCode;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.NetworkSettings;
import io.faro.common.network.Request;
import io.faro.common.network.Responder;
import io.faro.common.network.TransportServer;
import io.faro.proto.RegisterWorkerRequest;
import io.faro.proto.RegisterWorkerResponse;
import io.faro.proto.ShuffleKeyP;
import io.faro.proto.WorkerHeartbeatRequest;
import io.faro.proto.WorkerHeartbeatResponse;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A hand-written master for worker tests: answers RegisterWorker and WorkerHeartbeat on a loopback
 * port, records what it received, and can ask a worker to register again, to expire shuffles in its
 * next heartbeat answer, or to decommission.
 */
public final class FakeMaster implements AutoCloseable {
  private final TransportServer server;
  private final List<RegisterWorkerRequest> registrations = new CopyOnWriteArrayList<>();
  private final List<WorkerHeartbeatRequest> heartbeats = new CopyOnWriteArrayList<>();
  private final Queue<ShuffleKeyP> toExpire = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean registerAgain = new AtomicBoolean();
  private final AtomicBoolean decommission = new AtomicBoolean();

  public FakeMaster() {
    NetworkSettings network = NetworkSettings.from(FaroConf.empty());
    server =
        new TransportServer(
            "fake-master",
            "127.0.0.1",
            0,
            "faro.master.port",
            new NetworkSettings(
                1, network.connectTimeout(), network.requestTimeout(), network.maxFrameSize()),
            this::handle,
            null);
  }

  private void handle(Request request, Responder responder) {
    switch (request.type()) {
      case REGISTER_WORKER_REQUEST -> {
        registrations.add(request.meta(RegisterWorkerRequest.class));
        responder.respond(RegisterWorkerResponse.getDefaultInstance());
      }
      case WORKER_HEARTBEAT_REQUEST -> {
        heartbeats.add(request.meta(WorkerHeartbeatRequest.class));
        WorkerHeartbeatResponse.Builder response =
            WorkerHeartbeatResponse.newBuilder()
                .setLeader(true)
                .setRegisterAgain(registerAgain.getAndSet(false))
                .setDecommission(decommission.get());
        for (ShuffleKeyP key; (key = toExpire.poll()) != null; ) {
          response.addExpiredShuffles(key);
        }
        responder.respond(response.build());
      }
      default ->
          responder.fail(
              ErrorCode.UNSUPPORTED_MESSAGE, "fake master does not serve " + request.type());
    }
  }

  public String endpoint() {
    return "127.0.0.1:" + server.port();
  }

  public List<RegisterWorkerRequest> registrations() {
    return List.copyOf(registrations);
  }

  public List<WorkerHeartbeatRequest> heartbeats() {
    return List.copyOf(heartbeats);
  }

  /** The latest heartbeat of {@code workerId}, or null. */
  public WorkerHeartbeatRequest lastHeartbeat(String workerId) {
    WorkerHeartbeatRequest last = null;
    for (WorkerHeartbeatRequest h : heartbeats) {
      if (h.getWorkerId().equals(workerId)) {
        last = h;
      }
    }
    return last;
  }

  /** The next heartbeat answer tells the worker to delete {@code shuffle}. */
  public void expire(ShuffleId shuffle) {
    toExpire.add(
        ShuffleKeyP.newBuilder()
            .setAppId(shuffle.app().value())
            .setShuffleId(shuffle.shuffle())
            .build());
  }

  /** Every heartbeat answer from now on says whether the worker is decommissioning. */
  public void decommission(boolean on) {
    decommission.set(on);
  }

  /** The next heartbeat answer tells the worker to register again. */
  public void askToRegisterAgain() {
    registerAgain.set(true);
  }

  @Override
  public void close() {
    server.close();
  }
}
