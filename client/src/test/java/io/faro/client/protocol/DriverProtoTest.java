package io.faro.client.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.IdMapper;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.Role;
import io.faro.common.id.WorkerEndpoint;
import io.faro.common.id.WorkerId;
import io.faro.proto.CommitFilesResponse;
import io.faro.proto.CommittedPartitionP;
import io.faro.proto.PartitionLocationP;
import io.faro.proto.RequestSlotsResponse;
import org.junit.jupiter.api.Test;

/** The masters' and workers' answers to the driver, read into Faro's own types. */
class DriverProtoTest {
  private static final WorkerEndpoint ENDPOINT = new WorkerEndpoint("host-a", 9001, 9002, 9003);

  @Test
  void aCommitAnswerGivesEveryCommittedAndFailedLocation() {
    CommitFilesResponse answer =
        CommitFilesResponse.newBuilder()
            .addCommitted(
                CommittedPartitionP.newBuilder()
                    .setPartitionId(3)
                    .setEpoch(1)
                    .setBytes(4096)
                    .setChunks(2))
            .addFailedPartitionIds(5)
            .addFailedEpochs(2)
            .addFailedPartitionIds(6)
            .build();

    DriverProto.Commit commit = DriverProto.commit(answer);

    assertThat(commit.committed()).containsExactly(new DriverProto.CommittedCopy(3, 1, 4096, 2));
    assertThat(commit.failed())
        .as("a failed partition the worker gives no epoch for has epoch -1")
        .containsExactly(new DriverProto.FailedCopy(5, 2), new DriverProto.FailedCopy(6, -1));
  }

  @Test
  void aSlotsAnswerGivesItsLocationsInOrder() {
    PartitionLocation first =
        new PartitionLocation(0, 0, Role.PRIMARY, new WorkerId("worker-a"), ENDPOINT, 0);
    PartitionLocation second =
        new PartitionLocation(1, 0, Role.PRIMARY, new WorkerId("worker-b"), ENDPOINT, 1);
    RequestSlotsResponse answer =
        RequestSlotsResponse.newBuilder()
            .addLocations(IdMapper.toProto(first))
            .addLocations(IdMapper.toProto(second))
            .build();

    assertThat(DriverProto.slots(answer).locations()).containsExactly(first, second);
  }

  @Test
  void aSlotsAnswerWithAMalformedLocationIsRefused() {
    PartitionLocationP noRole =
        IdMapper.toProto(
                new PartitionLocation(7, 0, Role.PRIMARY, new WorkerId("worker-a"), ENDPOINT, 0))
            .toBuilder()
            .clearRole()
            .build();
    RequestSlotsResponse answer = RequestSlotsResponse.newBuilder().addLocations(noRole).build();

    assertThatThrownBy(() -> DriverProto.slots(answer))
        .isInstanceOfSatisfying(
            FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_REQUEST))
        .hasMessageContaining("partition 7");
  }
}
