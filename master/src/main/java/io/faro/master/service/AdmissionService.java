package io.faro.master.service;

import static java.util.Objects.requireNonNull;

import com.codahale.metrics.Counter;
import io.faro.common.admission.AdmissionRules;
import io.faro.common.admission.AppProfile;
import io.faro.common.admission.Quota;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.ShuffleId;
import io.faro.common.log.LogSafe;
import io.faro.master.raft.RaftNode;
import io.faro.master.state.ApplyResult;
import io.faro.master.state.RegisteredApp;
import io.faro.master.state.StampedCommand;
import io.faro.master.state.StateCommand;
import io.faro.master.state.StateReader;
import io.faro.metrics.FaroMetrics;
import io.faro.proto.AdmissionRulesResponse;
import io.faro.proto.SetAdmissionRulesRequest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The masters' admission rules: which applications may register (see {@link AdmissionRules}). The
 * rules live in the replicated state, so every master decides alike after a leader change. They
 * come either from operators ({@code bin/faro admin admission set}) or, with {@code
 * faro.master.admission.file}, from a file the leader reads every few seconds ({@link
 * #reloadFile}); never from both, so that neither silently undoes the other. They are checked when
 * an application first registers: a running application is never cut off.
 */
public final class AdmissionService {
  private static final Logger LOG = LoggerFactory.getLogger(AdmissionService.class);

  /** Largest rules text an operator may send (1,000 rules of about 100 characters). */
  static final int MAX_RULES_TEXT = 128 * 1024;

  /** Longest reason an operator may give (it is shown with every refusal). */
  static final int MAX_REASON = 1024;

  private final RaftNode raft;
  private final LoadView loads;
  private final Clock clock;
  private final Optional<Path> file;
  private final Counter refused;
  private final Counter overQuota;
  private final Counter badFiles;
  // The last file content that failed to parse, so that it is logged once, not every reload.
  private volatile String lastBadFile;

  public AdmissionService(
      RaftNode raft, LoadView loads, Clock clock, String file, FaroMetrics metrics) {
    this.raft = requireNonNull(raft, "raft is null");
    this.loads = requireNonNull(loads, "loads is null");
    this.clock = requireNonNull(clock, "clock is null");
    this.file = file.isEmpty() ? Optional.empty() : Optional.of(Path.of(file));
    this.refused =
        metrics.counter(
            "faro_master_apps_refused",
            "Application registrations the admission rules refused (on this master, as leader).");
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
    this.badFiles =
        metrics.counter(
            "faro_master_admission_file_rejected",
            "Contents of faro.master.admission.file that could not be read or parsed (each"
                + " counted once; the rules stayed as they were).");
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
      LOG.info("Refused new shuffle {}: {}", shuffle, over.get());
      throw new FaroException(
          ErrorCode.QUOTA_EXCEEDED, "cannot place new shuffle " + shuffle + ": " + over.get());
    }
  }

  /**
   * Each quota with what each user or queue it limits holds now (a quota for each user: every user
   * with a registered application), for the JSON API and metrics.
   */
  // The latest usage and when it was computed, for the gauges of one scrape.
  private volatile List<Map<String, Object>> cachedUsage = List.of();

  private volatile long cachedAtNanos;
  private volatile boolean cached;

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

  public List<Map<String, Object>> quotaUsage() {
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
  public long bytesHeld(AppId app) {
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

  /**
   * Throws ADMISSION_REFUSED, naming the rule, unless the rules admit {@code app}; an app already
   * registered is admitted whatever the rules say now.
   */
  void checkAdmitted(AppId app, AppProfile profile) {
    // Read under the state's lock, judged outside it.
    AdmissionRules rules = raft.read(state -> state.hasApp(app) ? null : state.admission());
    Optional<String> refusal = rules == null ? Optional.empty() : rules.refusal(profile);
    if (refusal.isPresent()) {
      refused.inc();
      LOG.info("Refused application {} ({}): {}", app, profile, refusal.get());
      throw new FaroException(
          ErrorCode.ADMISSION_REFUSED,
          "the Faro cluster does not admit application "
              + app
              + " ("
              + profile
              + "): "
              + refusal.get());
    }
  }

  /** The rules now, as text. */
  AdmissionRulesResponse rules() {
    AdmissionRules rules = raft.read(state -> state.admission());
    return AdmissionRulesResponse.newBuilder()
        .setRules(rules.text())
        .setSource(rules.source())
        .build();
  }

  /** An operator's rules, replacing the current ones; refused when a file is their source. */
  CompletableFuture<AdmissionRulesResponse> set(SetAdmissionRulesRequest request) {
    if (file.isPresent()) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST,
          "this cluster reads its admission rules from "
              + file.get()
              + " (faro.master.admission.file): edit that file on the masters instead");
    }
    if (request.getReason().length() > MAX_REASON) {
      throw new FaroException(
          ErrorCode.LIMIT_EXCEEDED,
          "a reason of " + request.getReason().length() + " characters, more than " + MAX_REASON);
    }
    if (request.getRules().length() > MAX_RULES_TEXT) {
      throw new FaroException(
          ErrorCode.LIMIT_EXCEEDED,
          "admission rules of "
              + request.getRules().length()
              + " characters, more than "
              + MAX_RULES_TEXT);
    }
    AdmissionRules rules;
    try {
      rules =
          AdmissionRules.parse(
              request.getRules(),
              "admin" + (request.getReason().isBlank() ? "" : ": " + request.getReason().strip()));
    } catch (IllegalArgumentException e) {
      throw new FaroException(ErrorCode.INVALID_REQUEST, e.getMessage());
    }
    return submit(rules)
        .thenApply(
            applied -> {
              LOG.info(
                  "Admission rules set ({}): {} rules",
                  LogSafe.text(rules.source()),
                  rules.rules().size());
              return rules();
            });
  }

  /**
   * On the leader: replicates the file's rules when they differ from the cluster's. A file that
   * cannot be read or parsed leaves the rules as they are, logged once per content.
   */
  public void reloadFile() {
    if (file.isEmpty() || !raft.isLeaderReady()) {
      return;
    }
    Path path = file.get();
    String text;
    try {
      if (Files.size(path) > MAX_RULES_TEXT) {
        throw new IOException("larger than " + MAX_RULES_TEXT + " bytes");
      }
      text = Files.readString(path, StandardCharsets.UTF_8);
    } catch (IOException e) {
      String key = "unreadable: " + e;
      if (!key.equals(lastBadFile)) {
        lastBadFile = key;
        badFiles.inc();
        LOG.error(
            "Cannot read the admission rules in {} (faro.master.admission.file): {}; the rules"
                + " stay as they are",
            path,
            e.toString());
      }
      return;
    }
    AdmissionRules rules;
    try {
      rules = AdmissionRules.parse(text, "file " + path);
    } catch (IllegalArgumentException e) {
      if (!text.equals(lastBadFile)) {
        lastBadFile = text;
        badFiles.inc();
        LOG.error(
            "The admission rules in {} (faro.master.admission.file) do not parse: {}; the rules"
                + " stay as they are",
            path,
            e.getMessage());
      }
      return;
    }
    lastBadFile = null;
    if (rules.equals(raft.read(state -> state.admission()))) {
      return;
    }
    submit(rules)
        .whenComplete(
            (applied, error) -> {
              if (error != null) {
                LOG.warn("Admission rules from {} not replicated yet: {}", path, error.toString());
              } else {
                LOG.info("Admission rules from {}: {} rules", path, rules.rules().size());
              }
            });
  }

  private CompletableFuture<ApplyResult.Applied> submit(AdmissionRules rules) {
    return raft.submit(
            new StampedCommand(clock.millis(), new StateCommand.SetAdmissionRules(rules)))
        .thenApply(
            result -> {
              if (result instanceof ApplyResult.Rejected rejected) {
                throw new FaroException(rejected.code(), rejected.message());
              }
              return (ApplyResult.Applied) result;
            });
  }
}
