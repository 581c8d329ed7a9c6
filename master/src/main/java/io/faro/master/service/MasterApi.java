package io.faro.master.service;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.AppId;
import io.faro.common.id.ShuffleId;
import io.faro.master.mapping.ProtoMapper;
import io.faro.master.raft.RaftNode;
import io.faro.master.state.RegisteredShuffle;
import io.faro.metrics.HttpEndpoint;
import io.faro.metrics.HttpEndpoint.Answer;
import io.faro.metrics.HttpEndpoint.BadRequest;
import io.faro.metrics.HttpEndpoint.Page;
import io.faro.proto.ClusterStatusRequest;
import io.faro.proto.ClusterStatusResponse;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The master's JSON API under {@code /api/v1/}, on its HTTP port: {@code workers}, {@code apps},
 * {@code shuffles} and {@code masters}. Every master answers from its own copy of the state, as far
 * as it has applied the log, without a round trip to the leader: each answer says which master
 * served it, the leader it knows and its applied index, so that a reader can tell a follower's view
 * from the leader's. Lists of apps and shuffles come in pages ({@code ?limit=}, at most 10,000,
 * 1,000 by default; {@code ?after=} the last id of the previous page). With authentication on,
 * those that list applications ({@link #OPERATORS}) need the admin token; workers and masters stay
 * open, as {@code /metrics} and {@code /status} do.
 */
public final class MasterApi {
  private final RaftNode raft;
  private final MasterRequestHandler handler;

  public MasterApi(RaftNode raft, MasterRequestHandler handler) {
    this.raft = requireNonNull(raft, "raft is null");
    this.handler = requireNonNull(handler, "handler is null");
  }

  /**
   * The pages that list applications (ids, users, queues, names): with authentication on, for
   * holders of the admin token only.
   */
  public static final Set<String> OPERATORS =
      Set.of("/api/v1/apps", "/api/v1/shuffles", "/api/v1/quotas");

  /** The pages, by path. */
  public Map<String, Page> pages() {
    return Map.of(
        "/api/v1/workers",
        Page.of(this::workers),
        "/api/v1/apps",
        this::apps,
        "/api/v1/shuffles",
        this::shuffles,
        "/api/v1/masters",
        Page.of(this::masters),
        "/api/v1/quotas",
        Page.of(this::quotas));
  }

  /** Each quota, with what each user or queue it limits holds now. */
  private Answer quotas() {
    Map<String, Object> out = header();
    out.put("quotas", handler.admission().quotaUsage());
    return Answer.json(out);
  }

  private Map<String, Object> header() {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("served_by", raft.masterId());
    out.put("leader_id", raft.leaderId());
    out.put("applied_index", raft.status().appliedIndex());
    return out;
  }

  private Answer workers() {
    ClusterStatusResponse cluster =
        handler.clusterStatusHere(
            ClusterStatusRequest.newBuilder().setPageSize(1).build(), raft.status().appliedIndex());
    Map<String, Object> out = header();
    out.put("workers", cluster.getWorkersList().stream().map(StatusFields::worker).toList());
    return Answer.json(out);
  }

  private static int limit(Map<String, String> query) {
    return HttpEndpoint.limit(query, ProtoMapper.DEFAULT_STATUS_PAGE, ProtoMapper.MAX_STATUS_PAGE);
  }

  private Answer apps(Map<String, String> query) {
    int limit = limit(query);
    String after = query.getOrDefault("after", "");
    AppId cursor = after.isEmpty() ? null : parse(() -> new AppId(after), "after", after);
    Map<String, Object> out = header();
    raft.read(
        state -> {
          HttpEndpoint.page(
              state.apps(),
              cursor,
              limit,
              "apps",
              app -> {
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("id", app.id().value());
                row.put("user", app.profile().user());
                row.put("queue", app.profile().queue());
                row.put("name", app.profile().name());
                row.put("registered_at_ms", app.registeredAtMs());
                Collection<RegisteredShuffle> held =
                    state
                        .shuffles()
                        .subMap(
                            new ShuffleId(app.id(), 0), new ShuffleId(app.id(), Integer.MAX_VALUE))
                        .values();
                row.put("shuffles", held.size());
                row.put("partitions", held.stream().mapToLong(s -> s.numPartitions()).sum());
                row.put(
                    "slots",
                    held.stream()
                        .flatMap(s -> s.slotsPerWorker().values().stream())
                        .mapToLong(Integer::longValue)
                        .sum());
                // As the workers' latest heartbeats to this master said.
                row.put("bytes", handler.admission().bytesHeld(app.id()));
                return row;
              },
              out);
          return null;
        });
    return Answer.json(out);
  }

  private Answer shuffles(Map<String, String> query) {
    int limit = limit(query);
    String after = query.getOrDefault("after", "");
    ShuffleId cursor =
        after.isEmpty() ? null : parse(() -> ShuffleId.parseKey(after), "after", after);
    Map<String, Object> out = header();
    raft.read(
        state -> {
          HttpEndpoint.page(state.shuffles(), cursor, limit, "shuffles", MasterApi::row, out);
          return null;
        });
    return Answer.json(out);
  }

  private static Map<String, Object> row(RegisteredShuffle s) {
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("id", s.id().key());
    row.put("app", s.id().app().value());
    row.put("shuffle", s.id().shuffle());
    row.put("partitions", s.numPartitions());
    row.put("workers", s.slotsPerWorker().size());
    row.put("slots", s.slotsPerWorker().values().stream().mapToLong(i -> i).sum());
    return row;
  }

  private static <T> T parse(Supplier<T> parse, String name, String text) {
    try {
      return parse.get();
    } catch (IllegalArgumentException e) {
      throw new BadRequest(name + " is not an id here (" + e.getMessage() + ")");
    }
  }

  private Answer masters() {
    Map<String, Object> out = header();
    out.put("this", StatusFields.master(handler.masterStatus()));
    out.put("peers", raft.peers());
    return Answer.json(out);
  }
}
