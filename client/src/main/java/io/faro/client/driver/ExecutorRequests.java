package io.faro.client.driver;

import static java.util.Objects.requireNonNull;

import io.faro.client.protocol.ExecutorProto;
import io.faro.common.error.ErrorCode;
import io.faro.common.id.AppId;
import io.faro.common.id.IdMapper;
import io.faro.common.network.Futures;
import io.faro.common.network.Request;
import io.faro.common.network.Responder;
import io.faro.proto.EmptyResponse;
import io.faro.proto.GetPushLocationsRequest;
import io.faro.proto.GetPushLocationsResponse;
import io.faro.proto.GetReducerFileGroupsRequest;
import io.faro.proto.GetReducerFileGroupsResponse;
import io.faro.proto.MapperEndRequest;
import io.faro.proto.MapperEndResponse;
import io.faro.proto.ReportShuffleLostRequest;
import io.faro.proto.ReviveRequest;
import io.faro.proto.ReviveResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The requests of this app's executors to the lifecycle port, once their identity was checked: each
 * is validated here (its shape, its ranges, the generation it names) before the part that acts on a
 * generation sees it ({@link Placement}, {@link Generation#mapperEnd}, {@link Committer}, {@link
 * LossCheck}), and answered when that part is done. Counts the phases of each generation's life
 * that these requests end: up to its commit, and to its first reader's answer.
 *
 * <p>Called on the port's event loops; all waiting is asynchronous.
 *
 * <p>Keeps protobuf types: it reads executors' requests by their message class and builds answers.
 */
final class ExecutorRequests {
  // The lifecycle manager's log lines keep its name.
  private static final Logger LOG = LoggerFactory.getLogger(LifecycleManager.class);

  /** What a reader asked of one generation: partitions [start, end) and maps [startMap, endMap). */
  private record FilesAsked(int start, int end, int startMap, int endMap) {}

  private final AppId app;
  private final Generations generations;
  private final Placement placement;
  private final Committer committer;
  private final LossCheck lossCheck;
  private final ShufflePhaseStats phases;

  ExecutorRequests(
      AppId app,
      Generations generations,
      Placement placement,
      Committer committer,
      LossCheck lossCheck,
      ShufflePhaseStats phases) {
    this.app = requireNonNull(app, "app is null");
    this.generations = requireNonNull(generations, "generations is null");
    this.placement = requireNonNull(placement, "placement is null");
    this.committer = requireNonNull(committer, "committer is null");
    this.lossCheck = requireNonNull(lossCheck, "lossCheck is null");
    this.phases = requireNonNull(phases, "phases is null");
  }

  void handle(Request request, Responder responder) {
    switch (request.type()) {
      case GET_PUSH_LOCATIONS_REQUEST ->
          pushLocations(request.meta(GetPushLocationsRequest.class), responder);
      case MAPPER_END_REQUEST -> mapperEnd(request.meta(MapperEndRequest.class), responder);
      case GET_REDUCER_FILE_GROUPS_REQUEST ->
          reducerFileGroups(request.meta(GetReducerFileGroupsRequest.class), responder);
      case REVIVE_REQUEST -> revive(request.meta(ReviveRequest.class), responder);
      case REPORT_SHUFFLE_LOST_REQUEST ->
          reportLost(request.meta(ReportShuffleLostRequest.class), responder);
      default ->
          responder.fail(
              ErrorCode.UNSUPPORTED_MESSAGE,
              "the lifecycle manager does not serve " + request.type());
    }
  }

  private void pushLocations(GetPushLocationsRequest r, Responder responder) {
    Generation g =
        generations.forWriter(
            r.getShuffleId(),
            r.getStageId(),
            r.getStageAttempt(),
            r.getNumMaps(),
            r.getNumPartitions());
    int start = r.getStartPartition();
    int askedEnd = r.hasEndPartition() ? r.getEndPartition() : Integer.MAX_VALUE;
    int end = Math.min(askedEnd, g.numPartitions());
    if (start < 0 || askedEnd < start || (start < askedEnd && start >= g.numPartitions())) {
      responder.fail(
          ErrorCode.INVALID_REQUEST,
          "locations of partitions "
              + start
              + " until "
              + askedEnd
              + " of shuffle "
              + g.id()
              + " asked: not a range of its "
              + g.numPartitions()
              + " partitions");
      return;
    }
    g.timeline().mark(ShuffleTimeline.Mark.FIRST_ASK);
    placement
        .place(g, start, end)
        .whenComplete(
            (placed, error) -> {
              if (error != null) {
                responder.fail(Futures.unwrap(error));
                return;
              }
              GetPushLocationsResponse.Builder b =
                  GetPushLocationsResponse.newBuilder().setFaroShuffleId(g.id().shuffle());
              g.locations().current(start, end).forEach(l -> b.addLocations(IdMapper.toProto(l)));
              responder.respond(b.build());
            });
  }

  private void revive(ReviveRequest r, Responder responder) {
    Generation g = generations.get(r.getShuffleId());
    placement
        .revive(g, ExecutorProto.failed(r))
        .whenComplete(
            (locations, error) -> {
              if (error != null) {
                responder.fail(Futures.unwrap(error));
                return;
              }
              ReviveResponse.Builder b = ReviveResponse.newBuilder();
              locations.forEach(l -> b.addLocations(IdMapper.toProto(l)));
              responder.respond(b.build());
            });
  }

  private void mapperEnd(MapperEndRequest r, Responder responder) {
    Generation g = generations.get(r.getShuffleId());
    g.checkShape(r.getNumMaps(), -1);
    BatchCounts batches = BatchCounts.of(r.getBatchPartitionsList(), r.getBatchCountsList());
    Generation.MapEnd end = g.mapperEnd(r.getMapId(), r.getAttemptId(), batches, r.getIncomplete());
    if (end.startsCommit()) {
      g.timeline().mark(ShuffleTimeline.Mark.COMMIT_STARTED);
      committer.commit(g).thenRun(() -> committed(g));
    }
    responder.respond(
        MapperEndResponse.newBuilder()
            .setWinningAttemptId(end.winner())
            .setGenerationLost(g.lost())
            .build());
  }

  /**
   * A reducer found data of a generation lost on every copy (see {@link LossCheck#reportedLost}).
   */
  private void reportLost(ReportShuffleLostRequest r, Responder responder) {
    Generation g = generations.get(r.getFaroShuffleId());
    RuntimeException error = lossCheck.reportedLost(g, r.getPartitionId(), r.getReason());
    if (error != null) {
      responder.fail(error);
      return;
    }
    responder.respond(EmptyResponse.getDefaultInstance());
  }

  private void reducerFileGroups(GetReducerFileGroupsRequest r, Responder responder) {
    int start = r.getStartPartition();
    int askedEnd = r.hasEndPartition() ? r.getEndPartition() : Integer.MAX_VALUE;
    if (start < 0 || askedEnd < start) {
      responder.fail(
          ErrorCode.INVALID_REQUEST,
          "files of partitions "
              + start
              + " until "
              + askedEnd
              + " of shuffle "
              + r.getShuffleId()
              + " asked: not a range");
      return;
    }
    if (r.getNumMaps() == 0) {
      // No map task, no file: every partition asked is empty.
      responder.respond(
          GetReducerFileGroupsResponse.newBuilder()
              .setStartPartition(start)
              .setEndPartition(askedEnd)
              .build());
      return;
    }
    Generation g = generationRead(r, responder);
    if (g == null) {
      return;
    }
    FilesAsked asked = filesAsked(r, g, start, askedEnd, responder);
    if (asked == null) {
      return;
    }
    answerFiles(r, g, asked, responder);
  }

  /**
   * The generation {@code r} reads: the one it names (a reader pinned to it), else its shuffle's
   * latest; null once {@code r} was answered with an error.
   */
  private Generation generationRead(GetReducerFileGroupsRequest r, Responder responder) {
    Generation g;
    if (r.hasFaroShuffleId()) {
      g = generations.get(r.getFaroShuffleId());
      if (g.engineShuffleId() != r.getShuffleId()) {
        responder.fail(
            ErrorCode.INVALID_REQUEST,
            "Faro shuffle "
                + g.id()
                + " is a generation of shuffle "
                + g.engineShuffleId()
                + ", not of shuffle "
                + r.getShuffleId());
        return null;
      }
    } else {
      g = generations.latest(r.getShuffleId());
    }
    // A generation no stage ever wrote (made at registration) has no commit to wait for.
    if (g == null || !g.written()) {
      responder.fail(
          ErrorCode.UNKNOWN_SHUFFLE,
          "shuffle "
              + r.getShuffleId()
              + " of "
              + app
              + " was never written through this lifecycle manager (or was unregistered)");
      return null;
    }
    return g;
  }

  /**
   * The partitions from {@code start} until {@code askedEnd}, and the maps, that {@code r} asks of
   * {@code g}, cut to what {@code g} has; null once {@code r} was answered with an error.
   */
  private static FilesAsked filesAsked(
      GetReducerFileGroupsRequest r, Generation g, int start, int askedEnd, Responder responder) {
    if (start < askedEnd && start >= g.numPartitions()) {
      responder.fail(
          ErrorCode.INVALID_REQUEST,
          "files of partition "
              + start
              + " asked; shuffle "
              + g.id()
              + " has "
              + g.numPartitions());
      return null;
    }
    int end = Math.max(start, Math.min(askedEnd, g.numPartitions()));
    int startMap = r.hasStartMap() ? r.getStartMap() : 0;
    int endMap = r.hasEndMap() ? r.getEndMap() : g.numMaps();
    if (startMap < 0 || endMap < startMap || endMap > g.numMaps()) {
      responder.fail(
          ErrorCode.INVALID_REQUEST,
          "batches of maps "
              + startMap
              + " until "
              + endMap
              + " asked; shuffle "
              + g.id()
              + " has "
              + g.numMaps());
      return null;
    }
    return new FilesAsked(start, end, startMap, endMap);
  }

  /** Answers {@code r} once {@code g}'s commit ended: its files, or only its batch counts. */
  private void answerFiles(
      GetReducerFileGroupsRequest r, Generation g, FilesAsked asked, Responder responder) {
    committer
        .fileGroups(g)
        .whenComplete(
            (files, error) -> {
              if (error != null) {
                responder.fail(error);
              } else {
                firstRead(g);
                responder.respond(
                    r.getBatchCountsOnly()
                        ? files.batchCounts(
                            asked.start(), asked.end(), asked.startMap(), asked.endMap())
                        : files.answer(asked.start(), asked.end()));
              }
            });
  }

  /** Counts the time from {@code g}'s commit to its first reader's answer, once. */
  private void firstRead(Generation g) {
    if (!g.commitStarted()) {
      return; // abandoned: answered without a commit
    }
    // COMMITTED first, in case this answer runs before committed(g) does.
    g.timeline().mark(ShuffleTimeline.Mark.COMMITTED);
    if (g.timeline().mark(ShuffleTimeline.Mark.FIRST_READ)) {
      phases.add(g.timeline(), ShuffleTimeline.Phase.FIRST_READ);
    }
  }

  /** Counts and logs (at debug) the phases of {@code g}'s life up to its commit. */
  private void committed(Generation g) {
    ShuffleTimeline t = g.timeline();
    t.mark(ShuffleTimeline.Mark.COMMITTED);
    phases.add(
        t,
        ShuffleTimeline.Phase.SCHEDULING,
        ShuffleTimeline.Phase.SLOTS,
        ShuffleTimeline.Phase.RESERVE,
        ShuffleTimeline.Phase.PLACEMENT,
        ShuffleTimeline.Phase.PLACEMENT_WAIT,
        ShuffleTimeline.Phase.MAPS,
        ShuffleTimeline.Phase.COMMIT);
    if (LOG.isDebugEnabled()) {
      LOG.debug("Shuffle {} committed; its phases: {}", g.id(), t.describe());
    }
  }
}
