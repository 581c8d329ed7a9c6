package io.faro.worker.control;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.IdMapper;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.Request;
import io.faro.common.network.RequestHandler;
import io.faro.common.network.Responder;
import io.faro.proto.CommitFilesRequest;
import io.faro.proto.ReserveSlotsRequest;
import io.faro.proto.ReserveSlotsResponse;
import io.faro.worker.partition.PartitionStore;
import io.faro.worker.protocol.ProtoMapper;
import io.faro.worker.status.WorkerStatusSampler;
import io.faro.worker.storage.Disk;

/**
 * Serves the RPC port: the lifecycle manager reserves partition locations and commits shuffles;
 * benchmarks and operators ask for the process's status. A commit is answered from the flusher
 * threads once every file is closed; the event loop only starts it.
 */
public final class ControlHandler implements RequestHandler {
  private final PartitionStore store;
  private final WorkerStatusSampler status;

  public ControlHandler(PartitionStore store, WorkerStatusSampler status) {
    this.store = requireNonNull(store, "store is null");
    this.status = requireNonNull(status, "status is null");
  }

  @Override
  public void handle(Request request, Responder responder) {
    try {
      switch (request.type()) {
        case RESERVE_SLOTS_REQUEST -> reserve(request.meta(ReserveSlotsRequest.class), responder);
        case COMMIT_FILES_REQUEST -> commit(request.meta(CommitFilesRequest.class), responder);
        case WORKER_STATUS_REQUEST ->
            responder.respond(
                ProtoMapper.toProto(status.status()).toBuilder()
                    .setAppendedBytes(store.counters().appendedBytes())
                    .setReplicatedBytes(store.counters().forwardedBytes())
                    .setSplitAnswers(store.counters().splitAnswers())
                    .setFetchedChunks(store.counters().fetchedChunks())
                    .addAllDiskHealth(
                        store.disks().all().stream().map(d -> d.health().describe()).toList())
                    .addAllDiskUsedBytes(store.disks().all().stream().map(Disk::usedBytes).toList())
                    .build());
        default ->
            responder.fail(
                ErrorCode.UNSUPPORTED_MESSAGE, request.type() + " is not served on the RPC port");
      }
    } catch (FaroException e) {
      responder.fail(e.code(), e.getMessage());
    }
  }

  private void reserve(ReserveSlotsRequest reserve, Responder responder) {
    ShuffleId shuffle = IdMapper.shuffleId(reserve.getShuffle());
    // Before anything proportional to the request is built.
    store.checkReserveSize(shuffle, reserve.getLocationsCount());
    store.reserve(
        shuffle,
        reserve.getOwnerToken(),
        reserve.getLocationsList().stream().map(ProtoMapper::reservation).toList());
    responder.respond(ReserveSlotsResponse.getDefaultInstance());
  }

  private void commit(CommitFilesRequest commit, Responder responder) {
    ShuffleId shuffle = IdMapper.shuffleId(commit.getShuffle());
    store
        .commit(shuffle, commit.getOwnerToken())
        .whenComplete(
            (result, error) -> {
              if (error != null) {
                responder.fail(
                    new FaroException(
                        ErrorCode.COMMIT_FAILED,
                        "commit of shuffle " + shuffle + " failed: " + error,
                        error));
              } else {
                responder.respond(ProtoMapper.toProto(result));
              }
            });
  }
}
