package io.faro.client.driver;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.client.ClientSettings;
import io.faro.client.testing.MiniFaroCluster;
import io.faro.common.auth.Identity;
import io.faro.common.error.ErrorCode;
import io.faro.common.id.AppId;
import io.faro.common.network.ClientPool;
import io.faro.common.network.HandlerCalls;
import io.faro.proto.ErrorResponse;
import io.faro.proto.GetPushLocationsRequest;
import io.faro.proto.GetPushLocationsResponse;
import io.faro.proto.GetReducerFileGroupsRequest;
import io.faro.proto.GetReducerFileGroupsResponse;
import io.faro.proto.MapperEndRequest;
import io.faro.proto.MapperEndResponse;
import io.faro.proto.MessageType;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The lifecycle manager's RPCs from executors, called as its port calls them, against a real master
 * and worker: only its own identity is served; the first attempt of a map to end wins and later
 * ones hear the winner; an incomplete attempt never wins; a map outside the shuffle is an error
 * answer; once every map ended, readers get the winners and the batches they must find; a reader
 * asking outside what was written is told so at once.
 */
class LifecycleManagerTest {
  private static final int SHUFFLE = 3;
  private static final int MAPS = 2;
  private static final int PARTITIONS = 4;

  @TempDir Path dir;

  private static MapperEndRequest.Builder mapperEnd(int faroShuffle, int map, int attempt) {
    return MapperEndRequest.newBuilder()
        .setShuffleId(faroShuffle)
        .setMapId(map)
        .setAttemptId(attempt)
        .setNumMaps(MAPS);
  }

  @Test
  void mapsEndOnceAndReadersLearnTheWinnersAndTheirBatches() throws Exception {
    try (MiniFaroCluster cluster =
            MiniFaroCluster.start(dir, 1, Map.of("faro.auth.enabled", "false"));
        ClientPool pool =
            new ClientPool("test", ClientSettings.from(cluster.clientConf()).network());
        LifecycleManager lifecycle =
            new LifecycleManager(
                new AppId("app-lifecycle"),
                ClientSettings.from(cluster.clientConf()),
                pool,
                "127.0.0.1")) {
      lifecycle.registerShuffle(SHUFFLE, MAPS, PARTITIONS).get(30, TimeUnit.SECONDS);
      try (HandlerCalls executor = new HandlerCalls(lifecycle.credentials().identity());
          HandlerCalls stranger = new HandlerCalls(Identity.ANONYMOUS)) {
        GetPushLocationsRequest ask =
            GetPushLocationsRequest.newBuilder()
                .setShuffleId(SHUFFLE)
                .setNumMaps(MAPS)
                .setNumPartitions(PARTITIONS)
                .build();
        assertThat(stranger.send(lifecycle, MessageType.GET_PUSH_LOCATIONS_REQUEST, ask, null))
            .isPresent();
        executor.send(lifecycle, MessageType.GET_PUSH_LOCATIONS_REQUEST, ask, null);
        GetPushLocationsResponse locations = executor.response(GetPushLocationsResponse.class);
        assertThat(locations.getLocationsCount()).isEqualTo(PARTITIONS);
        int faro = locations.getFaroShuffleId();

        // A forged end of every map, from a connection without the lifecycle's identity.
        assertThat(
                stranger.send(
                    lifecycle, MessageType.MAPPER_END_REQUEST, mapperEnd(faro, 0, 9).build(), null))
            .isPresent();

        // A map the shuffle does not have.
        executor.send(
            lifecycle, MessageType.MAPPER_END_REQUEST, mapperEnd(faro, MAPS, 0).build(), null);
        assertThat(executor.error().getCode()).isEqualTo(ErrorCode.INVALID_REQUEST.toProto());

        // Map 0: attempt 1 ends first and wins; attempt 0 hears it.
        executor.send(
            lifecycle,
            MessageType.MAPPER_END_REQUEST,
            mapperEnd(faro, 0, 1).addBatchPartitions(0).addBatchCounts(2).build(),
            null);
        assertThat(executor.response(MapperEndResponse.class).getWinningAttemptId()).isEqualTo(1);
        executor.send(
            lifecycle,
            MessageType.MAPPER_END_REQUEST,
            mapperEnd(faro, 0, 0).addBatchPartitions(1).addBatchCounts(5).build(),
            null);
        assertThat(executor.response(MapperEndResponse.class).getWinningAttemptId()).isEqualTo(1);

        // Map 1: an incomplete attempt never wins, and with no winner yet it is an error.
        executor.send(
            lifecycle,
            MessageType.MAPPER_END_REQUEST,
            mapperEnd(faro, 1, 0).setIncomplete(true).build(),
            null);
        ErrorResponse noWinner = executor.error();
        assertThat(noWinner.getCode()).isEqualTo(ErrorCode.SHUFFLE_COMMITTED.toProto());
        assertThat(noWinner.getMessage()).contains("no attempt of the map won");
        executor.send(
            lifecycle,
            MessageType.MAPPER_END_REQUEST,
            mapperEnd(faro, 1, 2).addBatchPartitions(3).addBatchCounts(1).build(),
            null);
        assertThat(executor.response(MapperEndResponse.class).getWinningAttemptId()).isEqualTo(2);

        // Every map ended: the shuffle commits, and readers learn what they must read.
        executor.send(
            lifecycle,
            MessageType.GET_REDUCER_FILE_GROUPS_REQUEST,
            GetReducerFileGroupsRequest.newBuilder()
                .setShuffleId(SHUFFLE)
                .setNumMaps(MAPS)
                .setStartPartition(0)
                .setEndPartition(PARTITIONS)
                .build(),
            null);
        GetReducerFileGroupsResponse files = executor.response(GetReducerFileGroupsResponse.class);
        assertThat(files.getFaroShuffleId()).isEqualTo(faro);
        assertThat(files.getWinningAttemptsList()).containsExactly(1, 2);
        assertThat(files.getExpectedBatchesList()).containsExactly(2L, 0L, 0L, 1L);
        assertThat(files.getMapBatchesList()).containsExactly(2, 1);
      }
    }
  }

  private static GetReducerFileGroupsRequest.Builder files(int shuffle, int start, int end) {
    return GetReducerFileGroupsRequest.newBuilder()
        .setShuffleId(shuffle)
        .setNumMaps(MAPS)
        .setStartPartition(start)
        .setEndPartition(end);
  }

  /** Asks {@code request} and returns the error it was answered with. */
  private static ErrorResponse refused(
      HandlerCalls executor,
      LifecycleManager lifecycle,
      GetReducerFileGroupsRequest.Builder request)
      throws Exception {
    executor.send(lifecycle, MessageType.GET_REDUCER_FILE_GROUPS_REQUEST, request.build(), null);
    return executor.error();
  }

  @Test
  void fileGroupsOutsideWhatWasWrittenAreRefusedBeforeAnyWait() throws Exception {
    try (MiniFaroCluster cluster =
            MiniFaroCluster.start(dir, 1, Map.of("faro.auth.enabled", "false"));
        ClientPool pool =
            new ClientPool("test", ClientSettings.from(cluster.clientConf()).network());
        LifecycleManager lifecycle =
            new LifecycleManager(
                new AppId("app-files"),
                ClientSettings.from(cluster.clientConf()),
                pool,
                "127.0.0.1");
        HandlerCalls executor = new HandlerCalls(lifecycle.credentials().identity())) {
      executor.send(
          lifecycle,
          MessageType.GET_PUSH_LOCATIONS_REQUEST,
          GetPushLocationsRequest.newBuilder()
              .setShuffleId(SHUFFLE)
              .setNumMaps(MAPS)
              .setNumPartitions(PARTITIONS)
              .build(),
          null);
      int faro = executor.response(GetPushLocationsResponse.class).getFaroShuffleId();

      ErrorResponse notARange = refused(executor, lifecycle, files(SHUFFLE, 2, 1));
      assertThat(notARange.getCode()).isEqualTo(ErrorCode.INVALID_REQUEST.toProto());
      assertThat(notARange.getMessage()).contains("not a range");

      // No map, no file: answered at once, whatever was written.
      executor.send(
          lifecycle,
          MessageType.GET_REDUCER_FILE_GROUPS_REQUEST,
          files(SHUFFLE + 1, 0, 2).setNumMaps(0).build(),
          null);
      GetReducerFileGroupsResponse empty = executor.response(GetReducerFileGroupsResponse.class);
      assertThat(empty.getEndPartition()).isEqualTo(2);
      assertThat(empty.getFilesCount()).isZero();

      ErrorResponse neverWritten = refused(executor, lifecycle, files(SHUFFLE + 1, 0, 1));
      assertThat(neverWritten.getCode()).isEqualTo(ErrorCode.UNKNOWN_SHUFFLE.toProto());
      assertThat(neverWritten.getMessage()).contains("never written");

      ErrorResponse otherShuffle =
          refused(executor, lifecycle, files(SHUFFLE + 1, 0, 1).setFaroShuffleId(faro));
      assertThat(otherShuffle.getCode()).isEqualTo(ErrorCode.INVALID_REQUEST.toProto());
      assertThat(otherShuffle.getMessage()).contains("is a generation of shuffle " + SHUFFLE);

      ErrorResponse pastTheEnd =
          refused(executor, lifecycle, files(SHUFFLE, PARTITIONS, PARTITIONS + 1));
      assertThat(pastTheEnd.getCode()).isEqualTo(ErrorCode.INVALID_REQUEST.toProto());
      assertThat(pastTheEnd.getMessage()).contains("has " + PARTITIONS);

      ErrorResponse maps =
          refused(executor, lifecycle, files(SHUFFLE, 0, 1).setStartMap(0).setEndMap(MAPS + 1));
      assertThat(maps.getCode()).isEqualTo(ErrorCode.INVALID_REQUEST.toProto());
      assertThat(maps.getMessage()).contains("batches of maps 0 until " + (MAPS + 1));
    }
  }
}
