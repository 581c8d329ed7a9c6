package io.faro.master.service;

import static java.util.Objects.requireNonNull;

import com.codahale.metrics.Counter;
import io.faro.common.admission.AdmissionRules;
import io.faro.common.admission.AppProfile;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.ShuffleId;
import io.faro.common.log.LogSafe;
import io.faro.master.raft.RaftNode;
import io.faro.master.state.ApplyResult;
import io.faro.master.state.StampedCommand;
import io.faro.master.state.StateCommand;
import io.faro.metrics.FaroMetrics;
import io.faro.proto.AdmissionRulesResponse;
import io.faro.proto.SetAdmissionRulesRequest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The masters' admission rules: which applications may register (see {@link AdmissionRules}). The
 * rules live in the replicated state, so every master decides alike after a leader change. They
 * come either from operators ({@code bin/faro admin admission set}) or, with {@code
 * faro.master.admission.file}, from a file the leader reads every few seconds ({@link
 * #reloadFile}); never from both, so that neither silently undoes the other. They are checked when
 * an application first registers: a running application is never cut off. The rules' quotas on what
 * a user's or queue's applications hold are counted and enforced by {@link ShuffleQuotas}.
 */
public final class AdmissionService implements AutoCloseable {
  // Also the logger of ShuffleQuotas, which was part of this class.
  static final Logger LOG = LoggerFactory.getLogger(AdmissionService.class);

  /** Largest rules text an operator may send (1,000 rules of about 100 characters). */
  static final int MAX_RULES_TEXT = 128 * 1024;

  /** Longest reason an operator may give (it is shown with every refusal). */
  static final int MAX_REASON = 1024;

  private final RaftNode raft;
  private final ShuffleQuotas quotas;
  private final Clock clock;
  private final Optional<Path> file;
  private final Counter refused;
  private final Counter badFiles;
  // The last file content that failed to parse, so that it is logged once, not every reload.
  private volatile String lastBadFile;
  // Rereads the file, once started; null before.
  private volatile ScheduledExecutorService reloads;

  /** How often the leader reads faro.master.admission.file. */
  static final long RELOAD_MILLIS = 2_000;

  public AdmissionService(
      RaftNode raft, LoadView loads, Clock clock, String file, FaroMetrics metrics) {
    this.raft = requireNonNull(raft, "raft is null");
    this.clock = requireNonNull(clock, "clock is null");
    this.file = file.isEmpty() ? Optional.empty() : Optional.of(Path.of(file));
    this.refused =
        metrics.counter(
            "faro_master_apps_refused",
            "Application registrations the admission rules refused (on this master, as leader).");
    this.quotas = new ShuffleQuotas(raft, loads, metrics);
    this.badFiles =
        metrics.counter(
            "faro_master_admission_file_rejected",
            "Contents of faro.master.admission.file that could not be read or parsed (each"
                + " counted once; the rules stayed as they were).");
  }

  /** See {@link ShuffleQuotas#checkQuota}. */
  void checkQuota(ShuffleId shuffle, int partitions) {
    quotas.checkQuota(shuffle, partitions);
  }

  /** See {@link ShuffleQuotas#quotaUsage}. */
  public List<Map<String, Object>> quotaUsage() {
    return quotas.quotaUsage();
  }

  /** Bytes the workers said they hold of {@code app}. */
  public long bytesHeld(AppId app) {
    return quotas.bytesHeld(app);
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

  /** Rereads faro.master.admission.file every {@link #RELOAD_MILLIS} from now on, on a thread. */
  public void startReloading(String threadName) {
    ScheduledExecutorService thread =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, threadName);
              t.setDaemon(true);
              return t;
            });
    reloads = thread;
    thread.scheduleWithFixedDelay(
        () -> {
          try {
            reloadFile();
          } catch (RuntimeException e) {
            LOG.warn("Reloading the admission rules failed: {}", e.toString());
          }
        },
        0,
        RELOAD_MILLIS,
        TimeUnit.MILLISECONDS);
  }

  /** Stops rereading the file. */
  @Override
  public void close() {
    ScheduledExecutorService thread = reloads;
    if (thread != null) {
      thread.shutdownNow();
    }
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
