package io.faro.master.testing;

import io.faro.proto.AppHeartbeatRequest;
import io.faro.proto.DiskLoadP;
import io.faro.proto.DiskSpecP;
import io.faro.proto.DiskStatusP;
import io.faro.proto.DiskTierP;
import io.faro.proto.RegisterAppRequest;
import io.faro.proto.RegisterWorkerRequest;
import io.faro.proto.RequestSlotsRequest;
import io.faro.proto.ShuffleKeyP;
import io.faro.proto.UnregisterShuffleRequest;
import io.faro.proto.WorkerEndpointP;
import io.faro.proto.WorkerHeartbeatRequest;
import java.util.List;

/** Master requests as a fake worker or lifecycle manager sends them. */
public final class Requests {
  private Requests() {}

  /** A worker {@code id} on a made-up endpoint with {@code disks} SSDs, indexes 0.. */
  public static RegisterWorkerRequest registerWorker(String id, int disks) {
    RegisterWorkerRequest.Builder b =
        RegisterWorkerRequest.newBuilder()
            .setWorkerId(id)
            .setEndpoint(
                WorkerEndpointP.newBuilder()
                    .setHost("host-" + id)
                    .setRpcPort(9100)
                    .setPushPort(9101)
                    .setFetchPort(9102));
    for (int i = 0; i < disks; i++) {
      b.addDisks(
          DiskSpecP.newBuilder()
              .setIndex(i)
              .setPath("/data" + i + "/faro")
              .setTier(DiskTierP.SSD)
              .setCapacityBytes(1L << 40));
    }
    return b.build();
  }

  public static WorkerHeartbeatRequest heartbeat(String worker, List<ShuffleKeyP> shuffles) {
    return WorkerHeartbeatRequest.newBuilder().setWorkerId(worker).addAllShuffles(shuffles).build();
  }

  /** A heartbeat reporting one disk's status. */
  public static WorkerHeartbeatRequest heartbeat(String worker, int disk, DiskStatusP status) {
    return WorkerHeartbeatRequest.newBuilder()
        .setWorkerId(worker)
        .addDisks(DiskLoadP.newBuilder().setIndex(disk).setStatus(status).setUsableBytes(1L << 30))
        .build();
  }

  public static RegisterAppRequest registerApp(String app) {
    return RegisterAppRequest.newBuilder().setAppId(app).build();
  }

  /** A registration that says who runs the app, for the admission rules. */
  public static RegisterAppRequest registerApp(String app, String user, String name) {
    return registerApp(app, user, "", name);
  }

  /** A registration that says who runs the app and in which queue. */
  public static RegisterAppRequest registerApp(String app, String user, String queue, String name) {
    return RegisterAppRequest.newBuilder()
        .setAppId(app)
        .setProfile(
            io.faro.proto.AppProfileP.newBuilder().setUser(user).setQueue(queue).setName(name))
        .build();
  }

  public static AppHeartbeatRequest appHeartbeat(String app) {
    return AppHeartbeatRequest.newBuilder().setAppId(app).build();
  }

  public static ShuffleKeyP shuffle(String app, int shuffle) {
    return ShuffleKeyP.newBuilder().setAppId(app).setShuffleId(shuffle).build();
  }

  public static RequestSlotsRequest requestSlots(ShuffleKeyP shuffle, int partitions) {
    return RequestSlotsRequest.newBuilder()
        .setShuffle(shuffle)
        .setNumPartitions(partitions)
        .build();
  }

  public static UnregisterShuffleRequest unregisterShuffle(ShuffleKeyP shuffle) {
    return UnregisterShuffleRequest.newBuilder().setShuffle(shuffle).build();
  }
}
