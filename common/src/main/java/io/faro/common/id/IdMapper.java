package io.faro.common.id;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.log.LogSafe;
import io.faro.proto.PartitionLocationP;
import io.faro.proto.RoleP;
import io.faro.proto.ShuffleKeyP;
import io.faro.proto.WorkerEndpointP;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The one mapping between the ids every module shares and their protobuf messages. Each module's
 * own mapper covers only its own records. A malformed message becomes a FaroException
 * INVALID_REQUEST that names the field.
 */
public final class IdMapper {
  /**
   * Workers and endpoints named by parsed locations, so that the locations of a shuffle of a
   * million partitions share a few objects instead of holding a copy each (about 200 bytes a
   * location). Cleared when it reaches {@link #MAX_INTERNED}: a cluster has fewer workers, and a
   * peer naming ever new ones cannot make it grow without bound.
   */
  private static final Map<Object, Object> INTERNED = new ConcurrentHashMap<>();

  private static final int MAX_INTERNED = 16_384;

  private IdMapper() {}

  @SuppressWarnings("unchecked")
  private static <T> T intern(T value) {
    if (INTERNED.size() >= MAX_INTERNED) {
      INTERNED.clear();
    }
    return (T) INTERNED.computeIfAbsent(value, v -> v);
  }

  public static ShuffleId shuffleId(ShuffleKeyP key) {
    return parse(
        () -> new ShuffleId(new AppId(key.getAppId()), key.getShuffleId()),
        "shuffle (app '" + LogSafe.id(key.getAppId()) + "', shuffle " + key.getShuffleId() + ")");
  }

  public static ShuffleKeyP toProto(ShuffleId id) {
    return ShuffleKeyP.newBuilder().setAppId(id.app().value()).setShuffleId(id.shuffle()).build();
  }

  public static WorkerEndpoint endpoint(WorkerEndpointP p) {
    if (p.getHost().isBlank()) {
      throw invalid("endpoint has no host");
    }
    return new WorkerEndpoint(p.getHost(), p.getRpcPort(), p.getPushPort(), p.getFetchPort());
  }

  public static WorkerEndpointP toProto(WorkerEndpoint e) {
    return WorkerEndpointP.newBuilder()
        .setHost(e.host())
        .setRpcPort(e.rpcPort())
        .setPushPort(e.pushPort())
        .setFetchPort(e.fetchPort())
        .build();
  }

  public static PartitionLocation location(PartitionLocationP p) {
    Role role =
        switch (p.getRole()) {
          case PRIMARY -> Role.PRIMARY;
          case REPLICA -> Role.REPLICA;
          default -> throw invalid("location of partition " + p.getPartitionId() + " has no role");
        };
    Optional<PartitionLocation> replica =
        p.hasReplica() ? Optional.of(location(p.getReplica())) : Optional.empty();
    return parse(
        () ->
            new PartitionLocation(
                p.getPartitionId(),
                p.getEpoch(),
                role,
                intern(new WorkerId(p.getWorkerId())),
                intern(endpoint(p.getEndpoint())),
                p.getDiskIndex(),
                replica),
        "locations");
  }

  public static PartitionLocationP toProto(PartitionLocation l) {
    PartitionLocationP.Builder b =
        PartitionLocationP.newBuilder()
            .setPartitionId(l.partition())
            .setEpoch(l.epoch())
            .setRole(l.role() == Role.PRIMARY ? RoleP.PRIMARY : RoleP.REPLICA)
            .setWorkerId(l.worker().value())
            .setEndpoint(toProto(l.endpoint()))
            .setDiskIndex(l.diskIndex());
    l.replica().ifPresent(r -> b.setReplica(toProto(r)));
    return b.build();
  }

  public static FaroException invalid(String message) {
    return new FaroException(ErrorCode.INVALID_REQUEST, message);
  }

  /** Runs a record constructor; its IllegalArgumentException becomes INVALID_REQUEST. */
  public static <T> T parse(Supplier<T> constructor, String field) {
    try {
      return constructor.get();
    } catch (IllegalArgumentException | NullPointerException e) {
      throw invalid("bad " + field + ": " + e.getMessage());
    }
  }
}
