package io.faro.master.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.google.protobuf.Message;
import io.faro.common.config.FaroConf;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkOptions;
import io.faro.common.network.NetworkSettings;
import io.faro.common.network.RemoteException;
import io.faro.master.MasterServerOptions;
import io.faro.master.server.MasterServer;
import io.faro.proto.ClusterStatusRequest;
import io.faro.proto.ClusterStatusResponse;
import io.faro.proto.EmptyResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A started master on loopback ephemeral ports with a real client pool and master client, as
 * workers and lifecycle managers use them. Closes both.
 */
public final class MasterFixture implements AutoCloseable {
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(10);

  private final MasterServer server;
  private final ClientPool pool;
  private final MasterClient client;

  private MasterFixture(MasterServer server) {
    this.server = server;
    this.pool =
        new ClientPool(
            "test-client",
            NetworkSettings.from(FaroConf.empty().with(NetworkOptions.IO_THREADS, "2")));
    this.client = new MasterClient(pool, List.of(endpoint()), CALL_TIMEOUT);
  }

  /** Config of a single master on loopback ephemeral ports, storing its state in {@code dir}. */
  public static FaroConf conf(Path dir) {
    return FaroConf.empty()
        .with(MasterServerOptions.HOST, "127.0.0.1")
        .with(MasterServerOptions.ADVERTISED_HOST, "127.0.0.1")
        .with(MasterServerOptions.PORT, "0")
        .with(MasterServerOptions.RAFT_PORT, "0")
        .with(MasterServerOptions.HTTP_PORT, "0")
        .with(MasterServerOptions.RATIS_DIR, dir.toString())
        .with(NetworkOptions.IO_THREADS, "2")
        // These tests register workers and apps with raw clients: authentication, on by default,
        // is tested where members hold secrets (ClusterAuthTest, AuthIT, WireFuzzIT).
        .with("faro.auth.enabled", "false");
  }

  public static MasterFixture start(FaroConf conf) {
    MasterServer server = new MasterServer(conf);
    try {
      server.start();
    } catch (RuntimeException e) {
      server.close();
      throw e;
    }
    return new MasterFixture(server);
  }

  public MasterServer server() {
    return server;
  }

  public HostPort endpoint() {
    return new HostPort("127.0.0.1", server.rpcPort());
  }

  /** Calls through the MasterClient (which retries what is retryable). */
  public <R extends Message> R call(Message request, Class<R> responseType) {
    return client.callBlocking(request, responseType);
  }

  public void call(Message request) {
    call(request, EmptyResponse.class);
  }

  /** Sends once, without retries, and returns the error the master answered. */
  public RemoteException callFails(Message request) {
    Throwable error =
        catchThrowable(
            () ->
                Futures.await(
                    pool.call(endpoint(), request, EmptyResponse.class),
                    CALL_TIMEOUT,
                    "test call"));
    assertThat(error).as("error answered to " + request.getClass().getSimpleName()).isNotNull();
    Throwable cause = error;
    while (!(cause instanceof RemoteException) && cause.getCause() != null) {
      cause = cause.getCause();
    }
    assertThat(cause).isInstanceOf(RemoteException.class);
    return (RemoteException) cause;
  }

  public ClusterStatusResponse status() {
    return call(ClusterStatusRequest.getDefaultInstance(), ClusterStatusResponse.class);
  }

  @Override
  public void close() {
    try {
      pool.close();
    } finally {
      server.close();
    }
  }
}
