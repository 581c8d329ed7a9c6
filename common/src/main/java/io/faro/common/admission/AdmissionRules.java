package io.faro.common.admission;

import static java.util.Objects.requireNonNull;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The masters' admission rules, in order: the first rule that matches an application admits or
 * refuses it, and an application no rule matches is admitted (no rules: every application is).
 * Checked when an application first registers, never again while it runs: a rule changed later cuts
 * off no running shuffle. With them, the {@link Quota}s ({@code limit} lines) that bound what the
 * applications of a user or a queue hold, checked when a new shuffle asks for its first slots.
 * Written one per line, {@code #} starting a comment:
 *
 * <pre>
 *   deny  user=guest                      # nobody runs as guest on Faro
 *   admit queue=etl name=nightly-* percent=20
 *   deny  name=nightly-*                  # the other 80% of the nightly jobs: not yet
 *   limit user=* shuffles=200 bytes=2t    # each user
 *   limit queue=adhoc partitions=1000000
 * </pre>
 *
 * @param source where they came from ("admin: REASON", "file PATH"), empty for none
 */
public record AdmissionRules(List<AdmissionRule> rules, List<Quota> quotas, String source) {
  /** At most this many rules: each registration walks them. */
  public static final int MAX_RULES = 1000;

  /** No rules: every application is admitted. */
  public static final AdmissionRules NONE = new AdmissionRules(List.of(), List.of(), "");

  public AdmissionRules {
    rules = List.copyOf(rules);
    quotas = List.copyOf(quotas);
    requireNonNull(source, "source is null");
    if (rules.size() + quotas.size() > MAX_RULES) {
      throw new IllegalArgumentException(
          (rules.size() + quotas.size())
              + " admission rules and limits, more than the "
              + MAX_RULES
              + " allowed");
    }
  }

  /** Rules without quotas. */
  public AdmissionRules(List<AdmissionRule> rules, String source) {
    this(rules, List.of(), source);
  }

  /** Why {@code app} is refused, naming the rule; empty when it is admitted. */
  public Optional<String> refusal(AppProfile app) {
    for (int i = 0; i < rules.size(); i++) {
      AdmissionRule rule = rules.get(i);
      if (rule.matches(app)) {
        return rule.deny()
            ? Optional.of(
                "admission rule "
                    + (i + 1)
                    + " '"
                    + rule.text()
                    + "'"
                    + (source.isEmpty() ? "" : " (" + source + ")")
                    + " refuses it")
            : Optional.empty();
      }
    }
    return Optional.empty();
  }

  /** The rules as text, one per line, then the limits. */
  public String text() {
    StringBuilder text = new StringBuilder();
    rules.forEach(r -> text.append(r.text()).append('\n'));
    quotas.forEach(q -> text.append(q.text()).append('\n'));
    return text.toString();
  }

  /**
   * Reads rules written one per line ({@code admit|deny [user=U] [queue=Q] [name=GLOB]
   * [percent=N]}, {@code #} comments, blank lines).
   *
   * @throws IllegalArgumentException naming the line, and what is allowed, for a line that is not a
   *     rule
   */
  public static AdmissionRules parse(String text, String source) {
    List<AdmissionRule> rules = new ArrayList<>();
    List<Quota> quotas = new ArrayList<>();
    String[] lines = text.split("\r?\n", -1);
    for (int n = 0; n < lines.length; n++) {
      String line = lines[n];
      int hash = line.indexOf('#');
      if (hash >= 0) {
        line = line.substring(0, hash);
      }
      line = line.strip();
      if (line.isEmpty()) {
        continue;
      }
      try {
        if (line.split("\\s+")[0].equals("limit")) {
          quotas.add(quota(line));
        } else {
          rules.add(rule(line));
        }
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "admission rule on line " + (n + 1) + " ('" + line + "'): " + e.getMessage(), e);
      }
    }
    return new AdmissionRules(rules, quotas, source);
  }

  /** A user or queue of a rule: a name, not a pattern ({@code *} is each, in limits only). */
  private static String exact(String key, String value) {
    if (value.contains("*")) {
      throw new IllegalArgumentException(
          key
              + "="
              + value
              + ": a rule's user or queue is an exact name (leave it out to match any; * is for"
              + " limits)");
    }
    return value;
  }

  private static Quota quota(String line) {
    String[] words = line.split("\\s+");
    String user = null;
    String queue = null;
    long shuffles = 0;
    long partitions = 0;
    long bytes = 0;
    for (Map.Entry<String, String> condition : conditions(words)) {
      String key = condition.getKey();
      String value = condition.getValue();
      switch (key) {
        case "user" -> user = value;
        case "queue" -> queue = value;
        case "shuffles" -> shuffles = count(key, value);
        case "partitions" -> partitions = count(key, value);
        case "bytes" -> bytes = Quota.parseBytes(value);
        default ->
            throw new IllegalArgumentException(
                "unknown limit '"
                    + key
                    + "': a limit names user or queue and sets shuffles, partitions or bytes");
      }
    }
    if ((user == null) == (queue == null)) {
      throw new IllegalArgumentException(
          "a limit names exactly one of user=U and queue=Q (* for each)");
    }
    return new Quota(queue != null, queue != null ? queue : user, shuffles, partitions, bytes);
  }

  /** The {@code key=value} words after the first, in order; a word without a value is named. */
  private static List<Map.Entry<String, String>> conditions(String[] words) {
    List<Map.Entry<String, String>> out = new ArrayList<>();
    for (int i = 1; i < words.length; i++) {
      int eq = words[i].indexOf('=');
      String key = eq < 0 ? words[i] : words[i].substring(0, eq);
      String value = eq < 0 ? "" : words[i].substring(eq + 1);
      if (value.isEmpty()) {
        throw new IllegalArgumentException(
            "'" + words[i] + "' has no value: write " + key + "=...");
      }
      out.add(Map.entry(key, value));
    }
    return out;
  }

  private static long count(String key, String value) {
    try {
      long n = Long.parseLong(value);
      if (n > 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // named below
    }
    throw new IllegalArgumentException(key + " must be a positive whole number, not " + value);
  }

  private static AdmissionRule rule(String line) {
    String[] words = line.split("\\s+");
    boolean deny;
    switch (words[0]) {
      case "admit" -> deny = false;
      case "deny" -> deny = true;
      default ->
          throw new IllegalArgumentException(
              "a rule starts with admit or deny, not '" + words[0] + "'");
    }
    String user = "";
    String queue = "";
    String name = "";
    int percent = 100;
    for (Map.Entry<String, String> condition : conditions(words)) {
      String key = condition.getKey();
      String value = condition.getValue();
      switch (key) {
        case "user" -> user = exact(key, value);
        case "queue" -> queue = exact(key, value);
        case "name" -> name = value;
        case "percent" -> {
          try {
            percent = Integer.parseInt(value);
          } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                "percent must be a whole number in 1..100, not " + value);
          }
        }
        default ->
            throw new IllegalArgumentException(
                "unknown condition '"
                    + key
                    + "': the conditions are user, queue, name and percent");
      }
    }
    return new AdmissionRule(deny, user, queue, name, percent);
  }
}
