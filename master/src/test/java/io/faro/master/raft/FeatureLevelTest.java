package io.faro.master.raft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.UnknownFieldSet;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.version.FeatureLevel;
import io.faro.master.mapping.LogCodec;
import io.faro.master.mapping.SnapshotCodec;
import io.faro.master.state.ApplyResult;
import io.faro.master.state.MasterState;
import io.faro.master.state.StampedCommand;
import io.faro.master.state.StateCommand;
import io.faro.proto.MasterCommand;
import io.faro.proto.MasterSnapshot;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.proto.RaftProtos.StateMachineLogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;

/**
 * The cluster feature level in the masters' state, log and snapshots: raised only, a new group's
 * first entry, and what a master does with an entry or snapshot of a newer release (it stops; it
 * never skips one).
 */
class FeatureLevelTest {
  private static StampedCommand stamped(StateCommand command) {
    return new StampedCommand(1_000, command);
  }

  @Test
  void aNewGroupStartsAtItsLevelAndAGroupWithStateOnlyWhenRaised() {
    MasterState fresh = new MasterState();
    assertThat(fresh.featureLevel()).isEqualTo(1);
    assertThat(fresh.apply(stamped(new StateCommand.SetFeatureLevel(2, true))))
        .isInstanceOf(ApplyResult.Applied.class);
    assertThat(fresh.featureLevel()).isEqualTo(2);

    // A group of a release before feature levels: its log starts with other commands.
    MasterState old = new MasterState();
    old.apply(stamped(new StateCommand.RegisterApp(new AppId("app-1"))));
    ApplyResult late = old.apply(stamped(new StateCommand.SetFeatureLevel(2, true)));
    assertThat(late).isInstanceOf(ApplyResult.Rejected.class);
    assertThat(((ApplyResult.Rejected) late).message()).contains("stays at feature level 1");
    assertThat(old.featureLevel()).isEqualTo(1);

    assertThat(old.apply(stamped(new StateCommand.SetFeatureLevel(2, false))))
        .isInstanceOf(ApplyResult.Applied.class);
    assertThat(old.featureLevel()).isEqualTo(2);
    ApplyResult lower = old.apply(stamped(new StateCommand.SetFeatureLevel(1, false)));
    assertThat(((ApplyResult.Rejected) lower).message()).contains("never lowered");
    assertThat(old.featureLevel()).isEqualTo(2);
  }

  @Test
  void theLogCarriesTheLevelAndRefusesOneOfANewerRelease() throws Exception {
    StampedCommand raise = stamped(new StateCommand.SetFeatureLevel(2, false));
    assertThat(LogCodec.decode(MasterCommand.parseFrom(LogCodec.encode(raise).toByteArray())))
        .isEqualTo(raise);

    MasterCommand beyond =
        LogCodec.encode(stamped(new StateCommand.SetFeatureLevel(2, false))).toBuilder()
            .setSetFeatureLevel(
                io.faro.proto.SetFeatureLevelCommand.newBuilder().setLevel(FeatureLevel.MAX + 1))
            .build();
    assertThatThrownBy(() -> LogCodec.decode(beyond))
        .isInstanceOf(FaroException.class)
        .hasMessageContaining("needs cluster feature level " + (FeatureLevel.MAX + 1))
        .hasMessageContaining("supports levels 1 to " + FeatureLevel.MAX)
        .extracting(e -> ((FaroException) e).code())
        .isEqualTo(ErrorCode.UNSUPPORTED_VERSION);

    assertThatThrownBy(() -> LogCodec.decode(newerKind()))
        .hasMessageContaining("of a kind this Faro")
        .extracting(e -> ((FaroException) e).code())
        .isEqualTo(ErrorCode.UNSUPPORTED_VERSION);
    // Nothing at all is still a malformed entry, not a newer one.
    assertThatThrownBy(() -> LogCodec.decode(MasterCommand.newBuilder().setTimestampMs(1).build()))
        .extracting(e -> ((FaroException) e).code())
        .isEqualTo(ErrorCode.INVALID_REQUEST);
  }

  /** An entry of a command kind a newer release added (a oneof field this one does not know). */
  private static MasterCommand newerKind() {
    return MasterCommand.newBuilder()
        .setTimestampMs(1)
        .setUnknownFields(
            UnknownFieldSet.newBuilder()
                .addField(99, UnknownFieldSet.Field.newBuilder().addVarint(7).build())
                .build())
        .build();
  }

  @Test
  void snapshotsCarryTheirFormatAndLevelAndANewerOneIsRefused() {
    MasterState state = new MasterState();
    MasterSnapshot atOne = SnapshotCodec.encode(state.view(), 1, 10);
    // Level 1: nothing a release before feature levels does not know.
    assertThat(atOne.getFormatVersion()).isZero();
    assertThat(atOne.getFeatureLevel()).isZero();
    assertThat(SnapshotCodec.decode(atOne).featureLevel()).isEqualTo(1);

    state.apply(stamped(new StateCommand.SetFeatureLevel(2, true)));
    MasterSnapshot atTwo = SnapshotCodec.encode(state.view(), 1, 11);
    assertThat(atTwo.getFormatVersion()).isEqualTo(2);
    assertThat(atTwo.getFeatureLevel()).isEqualTo(2);
    assertThat(SnapshotCodec.decode(atTwo)).isEqualTo(state.view());

    MasterSnapshot newerFormat = atTwo.toBuilder().setFormatVersion(3).build();
    assertThatThrownBy(() -> SnapshotCodec.decode(newerFormat))
        .hasMessageContaining("has format 3, newer than this Faro")
        .extracting(e -> ((FaroException) e).code())
        .isEqualTo(ErrorCode.UNSUPPORTED_VERSION);
    MasterSnapshot newerLevel = atTwo.toBuilder().setFeatureLevel(FeatureLevel.MAX + 1).build();
    assertThatThrownBy(() -> SnapshotCodec.decode(newerLevel))
        .hasMessageContaining("needs cluster feature level " + (FeatureLevel.MAX + 1))
        .extracting(e -> ((FaroException) e).code())
        .isEqualTo(ErrorCode.UNSUPPORTED_VERSION);
  }

  /**
   * A master that meets an entry of a newer release stops applying there: it neither skips it (its
   * state would then differ from its peers') nor applies anything after it, and says why.
   */
  @Test
  void aMasterStopsAtAnEntryOfANewerReleaseAndAppliesNothingAfterIt() throws Exception {
    MasterStateMachine machine = new MasterStateMachine();
    apply(machine, 1, LogCodec.encode(stamped(new StateCommand.RegisterApp(new AppId("app-1")))));
    assertThat(machine.halted()).isNotDone();

    CompletableFuture<Message> newer = apply(machine, 2, newerKind());
    assertThat(newer).isCompletedExceptionally();
    assertThat(machine.halted()).isDone();
    assertThat(machine.halted().join())
        .contains("stopped applying the log at index 2")
        .contains("a newer release wrote it");

    CompletableFuture<Message> after =
        apply(
            machine, 3, LogCodec.encode(stamped(new StateCommand.RegisterApp(new AppId("app-2")))));
    assertThat(after).isCompletedExceptionally();
    List<AppId> apps = machine.read(state -> state.appIds());
    assertThat(apps).containsExactly(new AppId("app-1"));
    assertThat(machine.getLastAppliedTermIndex().getIndex()).isEqualTo(1);
  }

  private static CompletableFuture<Message> apply(
      MasterStateMachine machine, long index, MasterCommand command) {
    LogEntryProto entry =
        LogEntryProto.newBuilder()
            .setTerm(1)
            .setIndex(index)
            .setStateMachineLogEntry(
                StateMachineLogEntryProto.newBuilder()
                    .setLogData(ByteString.copyFrom(command.toByteArray())))
            .build();
    return machine.applyTransaction(
        TransactionContext.newBuilder()
            .setStateMachine(machine)
            .setServerRole(RaftPeerRole.FOLLOWER)
            .setLogEntry(entry)
            .build());
  }
}
