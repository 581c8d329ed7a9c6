package io.faro.master.service;

import static java.util.Objects.requireNonNull;

import com.codahale.metrics.Counter;
import io.faro.common.admission.AppProfile;
import io.faro.common.admission.Quota;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.ShuffleId;
import io.faro.common.log.LogSafe;
import io.faro.master.raft.RaftNode;
import io.faro.master.state.RegisteredApp;
import io.faro.master.state.StateReader;
import io.faro.metrics.FaroMetrics;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * The quotas of the admission rules ({@link Quota}): how many shuffles, partitions and bytes on the
 * workers the applications of one user or queue may hold. Counts what each group holds now from the
 * replicated state and the workers' reports, refuses a new shuffle that would take its group over a
 * quota, and shows the use of every quota to the JSON API and the metrics. Part of {@link
 * AdmissionService}, which the rest of the master asks; it logs through that class's logger.
 */
final class ShuffleQuotas {
  private final RaftNode raft;
  private final LoadView loads;
  private final Counter overQuota;

  // The latest usage and when it was computed, for the gauges of one scrape.
  private volatile List<Map<String, Object>> cachedUsage = List.of();
  private volatile long cachedAtNanos;
  private volatile boolean cached;

  ShuffleQuotas(RaftNode raft, LoadView loads, FaroMetrics metrics) {
    this.raft = requireNonNull(raft, "raft is null");
    this.loads = requireNonNull(loads, "loads is null");
    metrics.gauge(
        "faro_master_quota_use_max",
        "The highest share of a quota any user or queue holds (1: at the limit, new shuffles"
            + " refused); 0 without quotas.",
        () ->
            recentQuotaUsage().stream()
                .mapToDouble(r -> ((Number) r.get("use")).doubleValue())
                .max()
                .orElse(0));
    metrics.gauge(
        "faro_master_quota_groups_at_limit",
        "Users and queues at or over one of their quotas: their new shuffles are refused.",
        () ->
            recentQuotaUsage().stream()
                .filter(r -> Boolean.TRUE.equals(r.get("at_limit")))
                .count());
    this.overQuota =
        metrics.counter(
            "faro_master_shuffles_refused_quota",
            "New shuffles refused because their user or queue was at a quota (on this master, as"
                + " leader).");
  }

  /**
   * What the applications of one user or queue hold now: shuffles placed, their partitions, and the
   * bytes the workers said they hold of them.
   */
  record Usage(long shuffles, long partitions, long bytes) {}

  /**
   * Throws QUOTA_EXCEEDED, naming the quota and what is held, when new shuffle {@code shuffle} of
   * {@code partitions} partitions would take its application's user or queue over a quota. A
   * shuffle the masters placed before is never refused (its later pages, its revives): a running
   * stage is never cut off. Racing new shuffles of one user may overshoot by the few in flight.
   */
  void checkQuota(ShuffleId shuffle, int partitions) {
    Optional<String> over =
        raft.read(
            state -> {
              if (state.admission().quotas().isEmpty() || state.hasShuffle(shuffle)) {
                return Optional.<String>empty();
              }
              RegisteredApp app = state.apps().get(shuffle.app());
              AppProfile profile = app == null ? AppProfile.UNKNOWN : app.profile();
              for (Quota quota : state.admission().quotas()) {
                String group = quota.groupOf(profile);
                if (group == null) {
                  continue;
                }
                Usage used = usage(state, quota.byQueue(), group);
                String what = null;
                if (quota.maxShuffles() > 0 && used.shuffles() + 1 > quota.maxShuffles()) {
                  what = used.shuffles() + " shuffles held, at most " + quota.maxShuffles();
                } else if (quota.maxPartitions() > 0
                    && used.partitions() + partitions > quota.maxPartitions()) {
                  what =
                      used.partitions()
                          + " partitions held and "
                          + partitions
                          + " asked, at most "
                          + quota.maxPartitions();
                } else if (quota.maxBytes() > 0 && used.bytes() >= quota.maxBytes()) {
                  what = used.bytes() + " bytes held on the workers, at most " + quota.maxBytes();
                }
                if (what != null) {
                  return Optional.of(
                      (quota.byQueue() ? "queue " : "user ")
                          + LogSafe.text(group)
                          + " is at its quota '"
                          + quota.text()
                          + "'"
                          + (state.admission().source().isEmpty()
                              ? ""
                              : " (" + state.admission().source() + ")")
                          + ": "
                          + what);
                }
              }
              return Optional.<String>empty();
            });
    if (over.isPresent()) {
      overQuota.inc();
      AdmissionService.LOG.info("Refused new shuffle {}: {}", shuffle, over.get());
      throw new FaroException(
          ErrorCode.QUOTA_EXCEEDED, "cannot place new shuffle " + shuffle + ": " + over.get());
    }
  }

  /** {@link #quotaUsage}, at most a second old: one scrape reads it for two gauges. */
  List<Map<String, Object>> recentQuotaUsage() {
    long now = System.nanoTime();
    if (!cached || now - cachedAtNanos > 1_000_000_000L) {
      cachedUsage = quotaUsage();
      cachedAtNanos = now;
      cached = true;
    }
    return cachedUsage;
  }

  /**
   * Each quota with what each user or queue it limits holds now (a quota for each user: every user
   * with a registered application), for the JSON API and metrics.
   */
  List<Map<String, Object>> quotaUsage() {
    return raft.read(
        state -> {
          List<Map<String, Object>> rows = new ArrayList<>();
          for (Quota quota : state.admission().quotas()) {
            SortedSet<String> groups = new TreeSet<>();
            if (quota.name().equals(Quota.EACH)) {
              for (RegisteredApp app : state.apps().values()) {
                String own = quota.byQueue() ? app.profile().queue() : app.profile().user();
                if (!own.isEmpty()) {
                  groups.add(own);
                }
              }
            } else {
              groups.add(quota.name());
            }
            for (String group : groups) {
              Usage used = usage(state, quota.byQueue(), group);
              Map<String, Object> row = new LinkedHashMap<>();
              row.put("quota", quota.text());
              row.put(quota.byQueue() ? "queue" : "user", group);
              row.put("shuffles", used.shuffles());
              row.put("max_shuffles", quota.maxShuffles());
              row.put("partitions", used.partitions());
              row.put("max_partitions", quota.maxPartitions());
              row.put("bytes", used.bytes());
              row.put("max_bytes", quota.maxBytes());
              row.put("use", Math.round(useRatio(quota, used) * 1000) / 1000.0);
              row.put("at_limit", atLimit(quota, used));
              rows.add(row);
            }
          }
          return rows;
        });
  }

  /** Whether a new shuffle of the group would be refused (a limit reached). */
  static boolean atLimit(Quota quota, Usage used) {
    return (quota.maxShuffles() > 0 && used.shuffles() >= quota.maxShuffles())
        || (quota.maxPartitions() > 0 && used.partitions() >= quota.maxPartitions())
        || (quota.maxBytes() > 0 && used.bytes() >= quota.maxBytes());
  }

  /** The highest share of a limit that {@code used} takes (0 to 1, or more once over). */
  static double useRatio(Quota quota, Usage used) {
    double ratio = 0;
    if (quota.maxShuffles() > 0) {
      ratio = Math.max(ratio, (double) used.shuffles() / quota.maxShuffles());
    }
    if (quota.maxPartitions() > 0) {
      ratio = Math.max(ratio, (double) used.partitions() / quota.maxPartitions());
    }
    if (quota.maxBytes() > 0) {
      ratio = Math.max(ratio, (double) used.bytes() / quota.maxBytes());
    }
    return ratio;
  }

  /** Bytes the workers said they hold of {@code app}. */
  long bytesHeld(AppId app) {
    return loads.bytesHeld(app);
  }

  /** What the apps of {@code group} (a user, or a queue) hold now; under the state's read. */
  Usage usage(StateReader state, boolean byQueue, String group) {
    long shuffles = 0;
    long partitionCount = 0;
    long bytes = 0;
    for (RegisteredApp app : state.apps().values()) {
      String own = byQueue ? app.profile().queue() : app.profile().user();
      if (!own.equals(group)) {
        continue;
      }
      for (var e : state.shuffles().tailMap(new ShuffleId(app.id(), 0)).entrySet()) {
        if (!e.getKey().app().equals(app.id())) {
          break;
        }
        shuffles++;
        partitionCount += e.getValue().numPartitions();
      }
      bytes += loads.bytesHeld(app.id());
    }
    return new Usage(shuffles, partitionCount, bytes);
  }
}
