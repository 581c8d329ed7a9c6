package io.faro.metrics;

import static java.util.Objects.requireNonNull;

import com.codahale.metrics.Counter;
import io.faro.common.network.RequestObserver;
import io.faro.proto.MessageType;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Counts and times the requests one server answers, by type: {@code <prefix>_requests_total},
 * {@code <prefix>_request_failures_total} and {@code <prefix>_request_seconds} (requests answered
 * without error, from their arrival on the event loop to their answer handed to the connection),
 * labelled with the server's port name and the request type. The types a server serves are
 * registered up front; anything else is counted as {@code other}, so that a peer sending junk types
 * cannot create series.
 */
public final class RequestMetrics implements RequestObserver {
  private record Series(Counter requests, Counter failures, Latency latency) {}

  private final Map<MessageType, Series> byType = new EnumMap<>(MessageType.class);
  private final Series other;

  /**
   * @param prefix {@code faro_worker} or {@code faro_master}
   * @param port the server's name among the process's ports (rpc, push, fetch)
   * @param served the request types this server serves
   */
  public RequestMetrics(FaroMetrics metrics, String prefix, String port, List<MessageType> served) {
    requireNonNull(metrics, "metrics is null");
    for (MessageType type : served) {
      byType.put(type, series(metrics, prefix, port, name(type)));
    }
    this.other = series(metrics, prefix, port, "other");
  }

  private static String name(MessageType type) {
    return type.name().replaceFirst("_REQUEST$", "").toLowerCase(Locale.ROOT);
  }

  private static Series series(FaroMetrics metrics, String prefix, String port, String type) {
    String[] labels = {"port", port, "type", type};
    return new Series(
        metrics.counter(prefix + "_requests", "Requests answered, by port and type.", labels),
        metrics.counter(
            prefix + "_request_failures",
            "Requests answered with an error (on a master, NOT_LEADER included: a follower's"
                + " redirect), or whose answer could not arrive (the connection closed), by port"
                + " and type.",
            labels),
        metrics.latency(
            prefix + "_request_seconds",
            "Time from a request's arrival to its answer, of requests answered without error, by"
                + " port and type.",
            labels));
  }

  private Series of(MessageType type) {
    Series s = byType.get(type);
    return s == null ? other : s;
  }

  @Override
  public long arrived(MessageType type) {
    return of(type).latency().start();
  }

  @Override
  public void answered(MessageType type, long arrival, boolean failed) {
    Series s = of(type);
    s.requests().inc();
    if (failed) {
      s.failures().inc();
    } else {
      s.latency().stop(arrival);
    }
  }
}
