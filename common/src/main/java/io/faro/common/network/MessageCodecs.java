package io.faro.common.network;

import com.google.protobuf.Descriptors;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Parser;
import io.faro.proto.AdmissionRulesRequest;
import io.faro.proto.AdmissionRulesResponse;
import io.faro.proto.AppHeartbeatRequest;
import io.faro.proto.AuthFinishRequest;
import io.faro.proto.AuthFinishResponse;
import io.faro.proto.AuthStartRequest;
import io.faro.proto.AuthStartResponse;
import io.faro.proto.ClusterStatusRequest;
import io.faro.proto.ClusterStatusResponse;
import io.faro.proto.CommitFilesRequest;
import io.faro.proto.CommitFilesResponse;
import io.faro.proto.EmptyResponse;
import io.faro.proto.ErrorResponse;
import io.faro.proto.FetchChunkRequest;
import io.faro.proto.FetchChunkResponse;
import io.faro.proto.GetPushLocationsRequest;
import io.faro.proto.GetPushLocationsResponse;
import io.faro.proto.GetReducerFileGroupsRequest;
import io.faro.proto.GetReducerFileGroupsResponse;
import io.faro.proto.MapperEndRequest;
import io.faro.proto.MapperEndResponse;
import io.faro.proto.MasterStatusRequest;
import io.faro.proto.MasterStatusResponse;
import io.faro.proto.MessageType;
import io.faro.proto.OpenStreamRequest;
import io.faro.proto.OpenStreamResponse;
import io.faro.proto.PushRequest;
import io.faro.proto.PushResponse;
import io.faro.proto.RegisterAppRequest;
import io.faro.proto.RegisterAppResponse;
import io.faro.proto.RegisterWorkerRequest;
import io.faro.proto.RegisterWorkerResponse;
import io.faro.proto.ReportShuffleLostRequest;
import io.faro.proto.RequestSlotsRequest;
import io.faro.proto.RequestSlotsResponse;
import io.faro.proto.ReserveSlotsRequest;
import io.faro.proto.ReserveSlotsResponse;
import io.faro.proto.ReviveRequest;
import io.faro.proto.ReviveResponse;
import io.faro.proto.SetAdmissionRulesRequest;
import io.faro.proto.SetFeatureLevelRequest;
import io.faro.proto.SetWorkerAdmissionRequest;
import io.faro.proto.StopWorkerRequest;
import io.faro.proto.StopWorkerResponse;
import io.faro.proto.TransferLeaderRequest;
import io.faro.proto.UnregisterAppRequest;
import io.faro.proto.UnregisterShuffleRequest;
import io.faro.proto.WorkerHeartbeatRequest;
import io.faro.proto.WorkerHeartbeatResponse;
import io.faro.proto.WorkerStatusRequest;
import io.faro.proto.WorkerStatusResponse;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;

/**
 * The one table from {@link MessageType} to protobuf class and parser. Immutable after class
 * initialisation; adding a message means one line here and one enum value in faro.proto.
 */
public final class MessageCodecs {
  private static final Map<MessageType, Parser<? extends Message>> PARSERS =
      new EnumMap<>(MessageType.class);
  private static final Map<Class<? extends Message>, MessageType> TYPES = new HashMap<>();
  private static final Map<MessageType, Descriptors.Descriptor> DESCRIPTORS =
      new EnumMap<>(MessageType.class);

  static {
    add(MessageType.ERROR_RESPONSE, ErrorResponse.class, ErrorResponse.parser());
    add(MessageType.EMPTY_RESPONSE, EmptyResponse.class, EmptyResponse.parser());
    add(
        MessageType.REGISTER_WORKER_REQUEST,
        RegisterWorkerRequest.class,
        RegisterWorkerRequest.parser());
    add(
        MessageType.REGISTER_WORKER_RESPONSE,
        RegisterWorkerResponse.class,
        RegisterWorkerResponse.parser());
    add(
        MessageType.WORKER_HEARTBEAT_REQUEST,
        WorkerHeartbeatRequest.class,
        WorkerHeartbeatRequest.parser());
    add(
        MessageType.WORKER_HEARTBEAT_RESPONSE,
        WorkerHeartbeatResponse.class,
        WorkerHeartbeatResponse.parser());
    add(MessageType.REGISTER_APP_REQUEST, RegisterAppRequest.class, RegisterAppRequest.parser());
    add(MessageType.REGISTER_APP_RESPONSE, RegisterAppResponse.class, RegisterAppResponse.parser());
    add(MessageType.APP_HEARTBEAT_REQUEST, AppHeartbeatRequest.class, AppHeartbeatRequest.parser());
    add(
        MessageType.UNREGISTER_APP_REQUEST,
        UnregisterAppRequest.class,
        UnregisterAppRequest.parser());
    add(MessageType.REQUEST_SLOTS_REQUEST, RequestSlotsRequest.class, RequestSlotsRequest.parser());
    add(
        MessageType.REQUEST_SLOTS_RESPONSE,
        RequestSlotsResponse.class,
        RequestSlotsResponse.parser());
    add(
        MessageType.UNREGISTER_SHUFFLE_REQUEST,
        UnregisterShuffleRequest.class,
        UnregisterShuffleRequest.parser());
    add(
        MessageType.CLUSTER_STATUS_REQUEST,
        ClusterStatusRequest.class,
        ClusterStatusRequest.parser());
    add(
        MessageType.CLUSTER_STATUS_RESPONSE,
        ClusterStatusResponse.class,
        ClusterStatusResponse.parser());
    add(MessageType.RESERVE_SLOTS_REQUEST, ReserveSlotsRequest.class, ReserveSlotsRequest.parser());
    add(
        MessageType.RESERVE_SLOTS_RESPONSE,
        ReserveSlotsResponse.class,
        ReserveSlotsResponse.parser());
    add(MessageType.COMMIT_FILES_REQUEST, CommitFilesRequest.class, CommitFilesRequest.parser());
    add(MessageType.COMMIT_FILES_RESPONSE, CommitFilesResponse.class, CommitFilesResponse.parser());
    add(MessageType.PUSH_REQUEST, PushRequest.class, PushRequest.parser());
    add(MessageType.PUSH_RESPONSE, PushResponse.class, PushResponse.parser());
    add(MessageType.OPEN_STREAM_REQUEST, OpenStreamRequest.class, OpenStreamRequest.parser());
    add(MessageType.OPEN_STREAM_RESPONSE, OpenStreamResponse.class, OpenStreamResponse.parser());
    add(MessageType.FETCH_CHUNK_REQUEST, FetchChunkRequest.class, FetchChunkRequest.parser());
    add(MessageType.FETCH_CHUNK_RESPONSE, FetchChunkResponse.class, FetchChunkResponse.parser());
    add(
        MessageType.GET_PUSH_LOCATIONS_REQUEST,
        GetPushLocationsRequest.class,
        GetPushLocationsRequest.parser());
    add(
        MessageType.GET_PUSH_LOCATIONS_RESPONSE,
        GetPushLocationsResponse.class,
        GetPushLocationsResponse.parser());
    add(MessageType.MAPPER_END_REQUEST, MapperEndRequest.class, MapperEndRequest.parser());
    add(MessageType.MAPPER_END_RESPONSE, MapperEndResponse.class, MapperEndResponse.parser());
    add(
        MessageType.GET_REDUCER_FILE_GROUPS_REQUEST,
        GetReducerFileGroupsRequest.class,
        GetReducerFileGroupsRequest.parser());
    add(
        MessageType.GET_REDUCER_FILE_GROUPS_RESPONSE,
        GetReducerFileGroupsResponse.class,
        GetReducerFileGroupsResponse.parser());
    add(MessageType.REVIVE_REQUEST, ReviveRequest.class, ReviveRequest.parser());
    add(MessageType.REVIVE_RESPONSE, ReviveResponse.class, ReviveResponse.parser());
    add(
        MessageType.REPORT_SHUFFLE_LOST_REQUEST,
        ReportShuffleLostRequest.class,
        ReportShuffleLostRequest.parser());
    add(MessageType.WORKER_STATUS_REQUEST, WorkerStatusRequest.class, WorkerStatusRequest.parser());
    add(
        MessageType.WORKER_STATUS_RESPONSE,
        WorkerStatusResponse.class,
        WorkerStatusResponse.parser());
    add(MessageType.STOP_WORKER_REQUEST, StopWorkerRequest.class, StopWorkerRequest.parser());
    add(MessageType.STOP_WORKER_RESPONSE, StopWorkerResponse.class, StopWorkerResponse.parser());
    add(MessageType.MASTER_STATUS_REQUEST, MasterStatusRequest.class, MasterStatusRequest.parser());
    add(
        MessageType.MASTER_STATUS_RESPONSE,
        MasterStatusResponse.class,
        MasterStatusResponse.parser());
    add(
        MessageType.TRANSFER_LEADER_REQUEST,
        TransferLeaderRequest.class,
        TransferLeaderRequest.parser());
    add(
        MessageType.SET_WORKER_ADMISSION_REQUEST,
        SetWorkerAdmissionRequest.class,
        SetWorkerAdmissionRequest.parser());
    add(
        MessageType.SET_ADMISSION_RULES_REQUEST,
        SetAdmissionRulesRequest.class,
        SetAdmissionRulesRequest.parser());
    add(
        MessageType.ADMISSION_RULES_REQUEST,
        AdmissionRulesRequest.class,
        AdmissionRulesRequest.parser());
    add(
        MessageType.ADMISSION_RULES_RESPONSE,
        AdmissionRulesResponse.class,
        AdmissionRulesResponse.parser());
    add(
        MessageType.SET_FEATURE_LEVEL_REQUEST,
        SetFeatureLevelRequest.class,
        SetFeatureLevelRequest.parser());
    add(MessageType.AUTH_START_REQUEST, AuthStartRequest.class, AuthStartRequest.parser());
    add(MessageType.AUTH_START_RESPONSE, AuthStartResponse.class, AuthStartResponse.parser());
    add(MessageType.AUTH_FINISH_REQUEST, AuthFinishRequest.class, AuthFinishRequest.parser());
    add(MessageType.AUTH_FINISH_RESPONSE, AuthFinishResponse.class, AuthFinishResponse.parser());
  }

  private MessageCodecs() {}

  private static <M extends Message> void add(MessageType type, Class<M> cls, Parser<M> parser) {
    PARSERS.put(type, parser);
    TYPES.put(cls, type);
    try {
      DESCRIPTORS.put(type, parser.parseFrom(new byte[0]).getDescriptorForType());
    } catch (InvalidProtocolBufferException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** The descriptor of {@code type}'s message, for one this build knows. */
  public static Descriptors.Descriptor descriptor(MessageType type) {
    return DESCRIPTORS.get(type);
  }

  /** The parser for {@code type}, or null when this build does not know it. */
  static Parser<? extends Message> parser(MessageType type) {
    return PARSERS.get(type);
  }

  public static MessageType typeOf(Message message) {
    MessageType type = TYPES.get(message.getClass());
    if (type == null) {
      throw new IllegalArgumentException("no MessageType for " + message.getClass().getName());
    }
    return type;
  }
}
