package io.faro.common.config;

import static io.faro.common.config.ConfigOption.booleanOption;
import static java.util.Objects.requireNonNull;

import io.faro.common.log.LogSafe;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.slf4j.Logger;

/**
 * Every configuration key the Faro modules of this process declare, to find keys that none does: a
 * misspelt key is otherwise ignored without a word, and the process runs on a default the operator
 * thought they had changed. Unknown keys are warned about with the closest declared key; with
 * {@code faro.config.strict=true} the process refuses to start instead.
 *
 * <p>A key counts as unknown only when every module that could declare it is loaded: the same
 * faro-defaults.conf serves every process, so a process without the client module (a test's class
 * path, say) must not call {@code faro.client.*} keys unknown. bin/faro loads every module.
 *
 * <p>Immutable and thread-safe.
 */
public final class KnownKeys {
  public static final ConfigOption<Boolean> STRICT =
      booleanOption(
          "faro.config.strict",
          false,
          "Refuse to start (a master, a worker, an admin command, a Spark application's Faro client) "
              + "when the config file, --set flags or spark.faro.* settings name a key that no Faro "
              + "module declares. false only warns, naming the key and the closest known key; the "
              + "key is ignored either way.");

  public static final List<ConfigOption<?>> ALL = List.of(STRICT);

  /**
   * The key prefixes of the modules above common, which a process may not have loaded. A key under
   * one of them that no loaded module claims (see {@link ConfigOptionGroup#namespaces}) cannot be
   * judged; a key under none of them (say {@code faro.wroker.dirs}) always can. {@code
   * faro.testing.} is the faro-testing module's (fault injection), which only tests load: bin/faro
   * never does, so there its keys are let through, and do nothing.
   */
  public static final List<String> MODULE_NAMESPACES =
      List.of("faro.master.", "faro.worker.", "faro.client.", "faro.testing.");

  /**
   * Keys an earlier version declared, with what took their place: an operator's old config file
   * then says what to write instead rather than only that the key is unknown.
   */
  static final Map<String, String> RETIRED =
      Map.of(
          "faro.worker.disk.reserve",
          "faro.worker.tier.<nvme|ssd|hdd>.reserve (one per disk tier)",
          "faro.worker.flush.threads.per.disk",
          "faro.worker.tier.<nvme|ssd|hdd>.flush.threads (one per disk tier)",
          "faro.worker.io.read.threads.per.disk",
          "faro.worker.tier.<nvme|ssd|hdd>.read.threads (one per disk tier)",
          "faro.worker.testing.drop.connections.per.mille",
          "faro.testing.drop.connections.per.mille (read by the faro-testing module, which only "
              + "tests put on a worker's class path)",
          "faro.worker.testing.slow.disk.delay.per.mib",
          "faro.testing.slow.disk.delay.per.mib (read by the faro-testing module, which only tests "
              + "put on a worker's class path)");

  /**
   * A key no module declares, where it was set, and the declared key closest to it, if any is
   * close.
   */
  public record UnknownKey(String key, String source, Optional<String> closest) {
    public UnknownKey {
      requireNonNull(key, "key is null");
      requireNonNull(source, "source is null");
      requireNonNull(closest, "closest is null");
    }

    /** "faro.worker.dirz (in faro.conf; did you mean faro.worker.dirs?)" */
    public String describe() {
      return LogSafe.id(key)
          + " ("
          + source
          + "; "
          + (RETIRED.containsKey(key)
              ? "no longer read; replaced by " + RETIRED.get(key)
              : closest.map(k -> "did you mean " + k + "?").orElse("no known key is like it"))
          + ")";
    }
  }

  private final Set<String> keys;
  private final List<String> namespaces;

  public KnownKeys(Collection<? extends ConfigOptionGroup> groups) {
    Set<String> all = new TreeSet<>();
    List<String> claimed = new ArrayList<>();
    for (ConfigOptionGroup group : groups) {
      group.options().forEach(o -> all.add(o.key()));
      claimed.addAll(group.namespaces());
    }
    this.keys = Set.copyOf(all);
    this.namespaces = List.copyOf(claimed);
  }

  /** The keys of every module on the class path, found with {@link ServiceLoader}. */
  public static KnownKeys loaded() {
    List<ConfigOptionGroup> groups = new ArrayList<>();
    ServiceLoader.load(ConfigOptionGroup.class, KnownKeys.class.getClassLoader())
        .forEach(groups::add);
    return new KnownKeys(groups);
  }

  public Set<String> keys() {
    return keys;
  }

  /** Whether {@code key} is declared, or cannot be judged because its module is not loaded. */
  public boolean accepts(String key) {
    if (keys.contains(key)) {
      return true;
    }
    if (namespaces.stream().anyMatch(key::startsWith)) {
      return false; // a loaded module declares every key under this prefix
    }
    // Under the prefix of a module this process did not load: only that module could tell.
    return MODULE_NAMESPACES.stream().anyMatch(key::startsWith);
  }

  /**
   * The keys of {@code sources} (key to where it was set, e.g. "in faro.conf") that no loaded
   * module declares, in key order.
   */
  public List<UnknownKey> unknown(Map<String, String> sources) {
    return sources.entrySet().stream()
        .filter(e -> !accepts(e.getKey()))
        .map(e -> new UnknownKey(e.getKey(), e.getValue(), closest(e.getKey())))
        .sorted(Comparator.comparing(UnknownKey::key))
        .toList();
  }

  /**
   * Warns about each of {@code unknown} on {@code log}; when {@code strict}, throws instead, one
   * message naming them all.
   *
   * @throws ConfigException when strict and some key is unknown
   */
  public static void report(List<UnknownKey> unknown, boolean strict, Logger log) {
    if (unknown.isEmpty()) {
      return;
    }
    if (strict) {
      throw new ConfigException(
          "Unknown config key"
              + (unknown.size() == 1 ? " " : "s ")
              + unknown.stream().map(UnknownKey::describe).collect(Collectors.joining("; "))
              + ". Fix or remove "
              + (unknown.size() == 1 ? "it" : "them")
              + " (every key is in docs/configuration.md), or set "
              + STRICT.key()
              + " to false to only warn ("
              + STRICT.key()
              + " is "
              + STRICT.allowed()
              + ")");
    }
    for (UnknownKey key : unknown) {
      log.warn(
          "Ignoring unknown config key {}. Every key is in docs/configuration.md; {}=true refuses "
              + "to start on unknown keys",
          key.describe(),
          STRICT.key());
    }
  }

  /**
   * The declared key {@code key} most likely meant: one it is the start of or that is the start of
   * it, whole words ({@code faro.client.push.replicate} for {@code
   * faro.client.push.replicate.enabled}), else the nearest by edit distance if that is within a
   * typo's reach (one edit in five characters, two to five edits).
   */
  public Optional<String> closest(String key) {
    // Keys arrive from files and flags: bound the work one absurd key can cause.
    String probe = key.length() > 256 ? key.substring(0, 256) : key;
    Optional<String> wholeWords =
        keys.stream()
            .filter(k -> k.startsWith(probe + ".") || probe.startsWith(k + "."))
            .min(
                Comparator.comparingInt((String k) -> Math.abs(k.length() - probe.length()))
                    .thenComparing(Comparator.naturalOrder()));
    if (wholeWords.isPresent()) {
      return wholeWords;
    }
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String candidate : keys) {
      int d = distance(probe, candidate);
      if (d < bestDistance || (d == bestDistance && candidate.compareTo(best) < 0)) {
        best = candidate;
        bestDistance = d;
      }
    }
    // More edits than that make another key, not a typo: naming it would mislead.
    int reach = Math.max(2, Math.min(5, probe.length() / 5));
    return best != null && bestDistance <= reach ? Optional.of(best) : Optional.empty();
  }

  /**
   * Edits (insert, delete, replace, swap of two neighbours) that turn {@code a} into {@code b}: the
   * optimal string alignment distance, in O(|a| |b|) time and O(|b|) space.
   */
  static int distance(String a, String b) {
    int[] beforePrevious = new int[b.length() + 1];
    int[] previous = new int[b.length() + 1];
    int[] current = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      previous[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      current[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        int d = Math.min(Math.min(previous[j] + 1, current[j - 1] + 1), previous[j - 1] + cost);
        if (i > 1
            && j > 1
            && a.charAt(i - 1) == b.charAt(j - 2)
            && a.charAt(i - 2) == b.charAt(j - 1)) {
          d = Math.min(d, beforePrevious[j - 2] + 1);
        }
        current[j] = d;
      }
      int[] recycled = beforePrevious;
      beforePrevious = previous;
      previous = current;
      current = recycled;
    }
    return previous[b.length()];
  }
}
