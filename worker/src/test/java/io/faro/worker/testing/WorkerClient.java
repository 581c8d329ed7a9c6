package io.faro.worker.testing;

import io.faro.common.config.FaroConf;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerEndpoint;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Frame;
import io.faro.common.network.Futures;
import io.faro.common.network.NetworkSettings;
import io.faro.proto.CommitFilesRequest;
import io.faro.proto.CommitFilesResponse;
import io.faro.proto.FetchChunkRequest;
import io.faro.proto.FetchChunkResponse;
import io.faro.proto.OpenStreamRequest;
import io.faro.proto.OpenStreamResponse;
import io.faro.proto.PartitionLocationP;
import io.faro.proto.PushPart;
import io.faro.proto.PushRequest;
import io.faro.proto.PushResponse;
import io.faro.proto.PushStatusP;
import io.faro.proto.ReserveSlotsRequest;
import io.faro.proto.ReserveSlotsResponse;
import io.faro.proto.RoleP;
import io.faro.proto.ShuffleKeyP;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Speaks the worker protocol the way the client will, over its own connection (one {@link
 * ClientPool} per instance, so two instances are two connections).
 */
public final class WorkerClient implements AutoCloseable {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  /** One part of a push frame. */
  public record Part(int partition, int epoch, byte[] bytes) {}

  private final ClientPool pool;
  private final WorkerEndpoint endpoint;

  public WorkerClient(String name, WorkerEndpoint endpoint) {
    NetworkSettings network = NetworkSettings.from(FaroConf.empty());
    this.pool =
        new ClientPool(
            name,
            new NetworkSettings(1, network.connectTimeout(), TIMEOUT, network.maxFrameSize()));
    this.endpoint = endpoint;
  }

  public static ShuffleKeyP key(ShuffleId shuffle) {
    return ShuffleKeyP.newBuilder()
        .setAppId(shuffle.app().value())
        .setShuffleId(shuffle.shuffle())
        .build();
  }

  public void reserve(ShuffleId shuffle, int epoch, int diskIndex, int... partitions) {
    await(reserveAsync(shuffle, 0, epoch, diskIndex, partitions), "reserve");
  }

  /**
   * Reserves as the owner holding {@code ownerToken} (0: none); the answer, or the worker's error.
   */
  public CompletableFuture<ReserveSlotsResponse> reserveAsync(
      ShuffleId shuffle, long ownerToken, int epoch, int diskIndex, int... partitions) {
    ReserveSlotsRequest.Builder request =
        ReserveSlotsRequest.newBuilder().setShuffle(key(shuffle)).setOwnerToken(ownerToken);
    for (int p : partitions) {
      request.addLocations(
          PartitionLocationP.newBuilder()
              .setPartitionId(p)
              .setEpoch(epoch)
              .setRole(RoleP.PRIMARY)
              .setDiskIndex(diskIndex));
    }
    return pool.call(endpoint.rpc(), request.build(), ReserveSlotsResponse.class);
  }

  /** Reserves primaries here whose parts are forwarded to {@code replica}'s push port. */
  public void reserveWithReplica(
      ShuffleId shuffle, int epoch, WorkerEndpoint replica, int... partitions) {
    ReserveSlotsRequest.Builder request = ReserveSlotsRequest.newBuilder().setShuffle(key(shuffle));
    for (int p : partitions) {
      PartitionLocationP copy =
          PartitionLocationP.newBuilder()
              .setPartitionId(p)
              .setEpoch(epoch)
              .setRole(RoleP.REPLICA)
              .setEndpoint(io.faro.common.id.IdMapper.toProto(replica))
              .build();
      request.addLocations(
          PartitionLocationP.newBuilder()
              .setPartitionId(p)
              .setEpoch(epoch)
              .setRole(RoleP.PRIMARY)
              .setReplica(copy));
    }
    await(pool.call(endpoint.rpc(), request.build(), ReserveSlotsResponse.class), "reserve");
  }

  /** The worker's status (RPC port). */
  public io.faro.proto.WorkerStatusResponse status() {
    return await(
        pool.call(
            endpoint.rpc(),
            io.faro.proto.WorkerStatusRequest.getDefaultInstance(),
            io.faro.proto.WorkerStatusResponse.class),
        "status");
  }

  public CommitFilesResponse commit(ShuffleId shuffle) {
    return await(commitAsync(shuffle, 0), "commit");
  }

  /**
   * Commits as a lifecycle manager does, asking the answer to report only the locations {@code
   * asked} (partition, epoch pairs).
   */
  public CommitFilesResponse commitAsking(ShuffleId shuffle, int... partitionEpochPairs) {
    CommitFilesRequest.Builder request =
        CommitFilesRequest.newBuilder().setShuffle(key(shuffle)).setReportOnlyAsked(true);
    for (int i = 0; i + 1 < partitionEpochPairs.length; i += 2) {
      request.addAskedLocations(
          ((long) partitionEpochPairs[i] << 32) | (partitionEpochPairs[i + 1] & 0xFFFFFFFFL));
    }
    return await(pool.call(endpoint.rpc(), request.build(), CommitFilesResponse.class), "commit");
  }

  /**
   * Commits as the owner holding {@code ownerToken} (0: none); the answer, or the worker's error.
   */
  public CompletableFuture<CommitFilesResponse> commitAsync(ShuffleId shuffle, long ownerToken) {
    return pool.call(
        endpoint.rpc(),
        CommitFilesRequest.newBuilder().setShuffle(key(shuffle)).setOwnerToken(ownerToken).build(),
        CommitFilesResponse.class);
  }

  public CompletableFuture<PushResponse> pushAsync(ShuffleId shuffle, List<Part> parts) {
    PushRequest.Builder request = PushRequest.newBuilder().setShuffle(key(shuffle));
    int total = 0;
    for (Part part : parts) {
      request.addParts(
          PushPart.newBuilder()
              .setPartitionId(part.partition())
              .setEpoch(part.epoch())
              .setLength(part.bytes().length));
      total += part.bytes().length;
    }
    ByteBuf body = PooledByteBufAllocator.DEFAULT.directBuffer(total);
    parts.forEach(p -> body.writeBytes(p.bytes()));
    return pushRaw(request.build(), body);
  }

  /** Sends {@code request} with {@code body} as is; takes ownership of {@code body}. */
  public CompletableFuture<PushResponse> pushRaw(PushRequest request, ByteBuf body) {
    return pool.send(endpoint.push(), request, body, TIMEOUT)
        .thenApply(
            frame -> {
              try {
                return frame.meta(PushResponse.class);
              } finally {
                frame.release();
              }
            });
  }

  public List<PushStatusP> push(ShuffleId shuffle, List<Part> parts) {
    return await(pushAsync(shuffle, parts), "push").getStatusesList();
  }

  public List<Long> openStream(PartitionKey key) {
    OpenStreamRequest request =
        OpenStreamRequest.newBuilder()
            .setShuffle(key(key.shuffle()))
            .setPartitionId(key.partition())
            .setEpoch(key.epoch())
            .build();
    return await(pool.call(endpoint.fetch(), request, OpenStreamResponse.class), "open stream")
        .getChunkOffsetsList();
  }

  public byte[] fetchChunk(PartitionKey key, int chunk) {
    FetchChunkRequest request =
        FetchChunkRequest.newBuilder()
            .setShuffle(key(key.shuffle()))
            .setPartitionId(key.partition())
            .setEpoch(key.epoch())
            .setChunkIndex(chunk)
            .build();
    Frame frame = await(pool.send(endpoint.fetch(), request, null, TIMEOUT), "fetch chunk");
    try {
      if (frame.meta(FetchChunkResponse.class).getChunkIndex() != chunk) {
        throw new AssertionError("asked for chunk " + chunk + ", got " + frame.meta());
      }
      return ByteBufUtil.getBytes(frame.body());
    } finally {
      frame.release();
    }
  }

  /** Every chunk of {@code key}, concatenated, checking each against the offsets. */
  public byte[] fetchAll(PartitionKey key) {
    List<Long> offsets = openStream(key);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int i = 0; i + 1 < offsets.size(); i++) {
      byte[] chunk = fetchChunk(key, i);
      if (chunk.length != offsets.get(i + 1) - offsets.get(i)) {
        throw new AssertionError(
            "chunk "
                + i
                + " of "
                + key
                + " has "
                + chunk.length
                + " bytes, offsets say "
                + (offsets.get(i + 1) - offsets.get(i)));
      }
      out.writeBytes(chunk);
    }
    return out.toByteArray();
  }

  public static <T> T await(CompletableFuture<T> future, String what) {
    return Futures.await(future, TIMEOUT, what);
  }

  @Override
  public void close() {
    pool.close();
  }
}
