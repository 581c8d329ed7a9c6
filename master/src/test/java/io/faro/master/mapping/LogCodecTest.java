package io.faro.master.mapping;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.DiskTier;
import io.faro.common.id.IdMapper;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.Role;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerEndpoint;
import io.faro.common.id.WorkerId;
import io.faro.master.state.ApplyResult;
import io.faro.master.state.DiskSpec;
import io.faro.master.state.StampedCommand;
import io.faro.master.state.StateCommand;
import io.faro.proto.AllocateSlotsCommand;
import io.faro.proto.DiskSpecP;
import io.faro.proto.MasterCommand;
import io.faro.proto.RegisterWorkerCommand;
import io.faro.proto.ShuffleKeyP;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class LogCodecTest {
  private static final WorkerId WORKER = new WorkerId("w1");
  private static final WorkerEndpoint ENDPOINT = new WorkerEndpoint("h", 1, 2, 3);
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("app"), 3);

  static List<StateCommand> commands() {
    return List.of(
        new StateCommand.RegisterWorker(
            WORKER,
            ENDPOINT,
            List.of(
                new DiskSpec(0, "/a", DiskTier.NVME, 10), new DiskSpec(1, "/b", DiskTier.HDD, 20))),
        new StateCommand.WorkerLost(WORKER, "gone"),
        new StateCommand.RegisterApp(new AppId("app")),
        new StateCommand.RegisterApp(new AppId("app-2"), "0123456789abcdef0123456789abcdef"),
        new StateCommand.RemoveApp(new AppId("app"), "done"),
        new StateCommand.AllocateSlots(
            SHUFFLE,
            2,
            List.of(
                new PartitionLocation(0, 0, Role.PRIMARY, WORKER, ENDPOINT, 1),
                new PartitionLocation(1, 4, Role.REPLICA, WORKER, ENDPOINT, 0))),
        new StateCommand.UnregisterShuffle(SHUFFLE),
        new StateCommand.RegisterApp(
            new AppId("app-3"),
            "",
            new io.faro.common.admission.AppProfile("ann", "etl", "nightly sales")),
        new StateCommand.SetAdmissionRules(
            io.faro.common.admission.AdmissionRules.parse(
                "deny user=guest\nadmit name=nightly-* percent=20\ndeny\n"
                    + "limit user=* shuffles=200 bytes=2t\nlimit queue=adhoc partitions=1000\n",
                "admin: rollout")),
        new StateCommand.SetAdmissionRules(io.faro.common.admission.AdmissionRules.NONE),
        new StateCommand.SetFeatureLevel(2, true));
  }

  @Test
  void anAllocationOfAMillionPartitionsIsAFewHundredBytesInTheLog() throws Exception {
    List<PartitionLocation> locations = new java.util.ArrayList<>();
    List<WorkerId> workers = List.of(new WorkerId("w1"), new WorkerId("w2"), new WorkerId("w3"));
    for (int p = 0; p < 1_000_000; p++) {
      locations.add(new PartitionLocation(p, 0, Role.PRIMARY, workers.get(p % 3), ENDPOINT, 0));
    }
    StampedCommand stamped =
        new StampedCommand(1, new StateCommand.AllocateSlots(SHUFFLE, 1_000_000, locations, "r1"));

    byte[] entry = LogCodec.encode(stamped).toByteArray();

    assertThat(entry.length).isLessThan(200);
    StateCommand.AllocateSlots parsed =
        (StateCommand.AllocateSlots) LogCodec.decode(MasterCommand.parseFrom(entry)).command();
    assertThat(parsed.slotsPerWorker())
        .containsEntry(workers.get(0), 333_334)
        .containsEntry(workers.get(2), 333_333);
    assertThat(parsed.requestId()).isEqualTo("r1");
  }

  @Test
  void anAllocationLoggedAsLocationsByAnOlderMasterStillApplies() throws Exception {
    MasterCommand old =
        MasterCommand.newBuilder()
            .setTimestampMs(1)
            .setAllocateSlots(
                AllocateSlotsCommand.newBuilder()
                    .setShuffle(ShuffleKeyP.newBuilder().setAppId("app").setShuffleId(0))
                    .setNumPartitions(2)
                    .addLocations(
                        IdMapper.toProto(
                            new PartitionLocation(0, 0, Role.PRIMARY, WORKER, ENDPOINT, 0)))
                    .addLocations(
                        IdMapper.toProto(
                            new PartitionLocation(1, 0, Role.PRIMARY, WORKER, ENDPOINT, 0))))
            .build();

    StateCommand.AllocateSlots parsed = (StateCommand.AllocateSlots) LogCodec.decode(old).command();

    assertThat(parsed.slotsPerWorker()).containsExactly(java.util.Map.entry(WORKER, 2));
  }

  @ParameterizedTest
  @MethodSource("commands")
  void everyCommandRoundTripsThroughTheLogFormat(StateCommand command) throws Exception {
    StampedCommand stamped = new StampedCommand(1234, command);
    byte[] bytes = LogCodec.encode(stamped).toByteArray();

    assertThat(LogCodec.decode(MasterCommand.parseFrom(bytes))).isEqualTo(stamped);
  }

  @Test
  void resultsRoundTrip() {
    ApplyResult applied =
        new ApplyResult.Applied(
            List.of(new PartitionLocation(0, 0, Role.PRIMARY, WORKER, ENDPOINT, 1)));
    ApplyResult rejected = new ApplyResult.Rejected(ErrorCode.UNKNOWN_APP, "app x is gone");

    assertThat(LogCodec.decodeResult(LogCodec.encodeResult(applied))).isEqualTo(applied);
    assertThat(LogCodec.decodeResult(LogCodec.encodeResult(rejected))).isEqualTo(rejected);
  }

  @Test
  void commandWithoutBodyOrTimestampIsInvalid() {
    assertThatThrownBy(() -> LogCodec.decode(MasterCommand.newBuilder().setTimestampMs(5).build()))
        .isInstanceOfSatisfying(
            FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_REQUEST));
    MasterCommand noTime =
        LogCodec.encode(new StampedCommand(1, commands().get(2))).toBuilder()
            .setTimestampMs(0)
            .build();
    assertThatThrownBy(() -> LogCodec.decode(noTime))
        .isInstanceOfSatisfying(
            FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_REQUEST));
  }

  @Test
  void malformedFieldsAreInvalidRequestsNamingTheProblem() {
    MasterCommand diskWithoutTier =
        MasterCommand.newBuilder()
            .setTimestampMs(1)
            .setRegisterWorker(
                RegisterWorkerCommand.newBuilder()
                    .setWorkerId("w1")
                    .setEndpoint(IdMapper.toProto(ENDPOINT))
                    .addDisks(DiskSpecP.newBuilder().setIndex(0).setPath("/data")))
            .build();
    assertThatThrownBy(() -> LogCodec.decode(diskWithoutTier))
        .isInstanceOf(FaroException.class)
        .hasMessageContaining("/data")
        .hasMessageContaining("tier");

    MasterCommand partitionOutOfRange =
        MasterCommand.newBuilder()
            .setTimestampMs(1)
            .setAllocateSlots(
                AllocateSlotsCommand.newBuilder()
                    .setShuffle(ShuffleKeyP.newBuilder().setAppId("app").setShuffleId(0))
                    .setNumPartitions(1)
                    .addLocations(
                        IdMapper.toProto(
                            new PartitionLocation(5, 0, Role.PRIMARY, WORKER, ENDPOINT, 0))))
            .build();
    assertThatThrownBy(() -> LogCodec.decode(partitionOutOfRange))
        .isInstanceOfSatisfying(
            FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_REQUEST))
        .hasMessageContaining("partition 5");

    assertThatThrownBy(() -> ProtoMapper.appId(" "))
        .isInstanceOf(FaroException.class)
        .hasMessageContaining("app_id");
  }
}
