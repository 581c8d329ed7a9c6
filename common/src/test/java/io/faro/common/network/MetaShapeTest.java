package io.faro.common.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.proto.PartitionLocationP;
import io.faro.proto.PushPart;
import io.faro.proto.PushRequest;
import io.faro.proto.RequestSlotsRequest;
import io.faro.proto.ReserveSlotsRequest;
import io.faro.proto.ShuffleKeyP;
import io.faro.proto.WorkerEndpointP;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The objects a meta would parse into are counted from its bytes, before anything is parsed. */
class MetaShapeTest {
  @Test
  void countsEmbeddedMessagesAndStringsButNotScalars() throws Exception {
    PushRequest push =
        PushRequest.newBuilder()
            .setShuffle(ShuffleKeyP.newBuilder().setAppId("app-1").setShuffleId(3))
            .addParts(PushPart.newBuilder().setPartitionId(1).setLength(10))
            .addParts(PushPart.getDefaultInstance())
            .setChunkSize(1 << 20)
            .build();
    // shuffle, its app id, two parts.
    assertThat(MetaShape.check(PushRequest.getDescriptor(), push.toByteArray(), 100)).isEqualTo(4);

    RequestSlotsRequest slots =
        RequestSlotsRequest.newBuilder()
            .addAllPartitionIds(IntStream.range(0, 10_000).boxed().toList())
            .build();
    assertThat(MetaShape.check(RequestSlotsRequest.getDescriptor(), slots.toByteArray(), 100))
        .as("packed integers are kept in a primitive array")
        .isZero();

    ReserveSlotsRequest reserve =
        ReserveSlotsRequest.newBuilder()
            .addLocations(
                PartitionLocationP.newBuilder()
                    .setWorkerId("w1")
                    .setEndpoint(WorkerEndpointP.newBuilder().setHost("h"))
                    .setReplica(PartitionLocationP.newBuilder().setWorkerId("w2")))
            .putReplicaGrants("w2", com.google.protobuf.ByteString.copyFromUtf8("grant"))
            .build();
    // location, worker id, endpoint, host, replica, its worker id; a map entry, its key and value.
    assertThat(MetaShape.check(ReserveSlotsRequest.getDescriptor(), reserve.toByteArray(), 100))
        .isEqualTo(9);
  }

  @Test
  void stopsAtTheFirstObjectOverTheLimit() {
    byte[] emptyParts = new byte[2_000_000];
    for (int i = 0; i < emptyParts.length; i += 2) {
      emptyParts[i] = 0x12;
    }
    assertThatThrownBy(() -> MetaShape.check(PushRequest.getDescriptor(), emptyParts, 50))
        .isInstanceOfSatisfying(MetaShape.Refused.class, e -> assertThat(e.tooMany()).isTrue())
        .hasMessageContaining("more than 50 objects");
    // Unknown fields are objects too (protobuf keeps them).
    byte[] unknown = {0x7a, 0, 0x7a, 0, 0x7a, 0};
    assertThatThrownBy(() -> MetaShape.check(PushRequest.getDescriptor(), unknown, 2))
        .hasMessageContaining("more than 2 objects");
  }

  @Test
  void refusesDeepNestingGroupsAndGarbage() {
    PartitionLocationP.Builder deep = PartitionLocationP.newBuilder();
    for (int i = 0; i < MetaShape.MAX_DEPTH + 2; i++) {
      deep = PartitionLocationP.newBuilder().setReplica(deep);
    }
    byte[] nested = deep.build().toByteArray();
    assertThatThrownBy(() -> MetaShape.check(PartitionLocationP.getDescriptor(), nested, 1000))
        .isInstanceOfSatisfying(MetaShape.Refused.class, e -> assertThat(e.tooMany()).isFalse())
        .hasMessageContaining("nests deeper than");

    byte[] group = {0x0b, 0x0c}; // field 1, start group; end group
    assertThatThrownBy(() -> MetaShape.check(PushRequest.getDescriptor(), group, 1000))
        .hasMessageContaining("group");

    byte[] truncated = {0x12, 0x05, 0x08};
    assertThatThrownBy(() -> MetaShape.check(PushRequest.getDescriptor(), truncated, 1000))
        .isInstanceOfSatisfying(MetaShape.Refused.class, e -> assertThat(e.tooMany()).isFalse())
        .hasMessageContaining("malformed");
  }
}
