package io.faro.client;

import io.faro.common.id.AppId;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.Role;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerEndpoint;
import io.faro.common.id.WorkerId;
import io.faro.proto.PartitionLocationP;
import io.faro.proto.RoleP;
import io.faro.proto.ShuffleKeyP;
import io.faro.proto.WorkerEndpointP;

/** The client's one mapping between protobuf messages and domain records. */
public final class ProtoMapper {
  private ProtoMapper() {}

  public static ShuffleKeyP toProto(ShuffleId id) {
    return ShuffleKeyP.newBuilder().setAppId(id.app().value()).setShuffleId(id.shuffle()).build();
  }

  public static ShuffleId fromProto(ShuffleKeyP p) {
    return new ShuffleId(new AppId(p.getAppId()), p.getShuffleId());
  }

  public static PartitionLocation fromProto(PartitionLocationP p) {
    WorkerEndpointP e = p.getEndpoint();
    return new PartitionLocation(
        p.getPartitionId(),
        p.getEpoch(),
        p.getRole() == RoleP.REPLICA ? Role.REPLICA : Role.PRIMARY,
        new WorkerId(p.getWorkerId()),
        new WorkerEndpoint(e.getHost(), e.getRpcPort(), e.getPushPort(), e.getFetchPort()),
        p.getDiskIndex());
  }

  public static PartitionLocationP toProto(PartitionLocation l) {
    WorkerEndpoint e = l.endpoint();
    return PartitionLocationP.newBuilder()
        .setPartitionId(l.partition())
        .setEpoch(l.epoch())
        .setRole(l.role() == Role.REPLICA ? RoleP.REPLICA : RoleP.PRIMARY)
        .setWorkerId(l.worker().value())
        .setEndpoint(WorkerEndpointP.newBuilder()
            .setHost(e.host()).setRpcPort(e.rpcPort()).setPushPort(e.pushPort()).setFetchPort(e.fetchPort()))
        .setDiskIndex(l.diskIndex())
        .build();
  }
}
