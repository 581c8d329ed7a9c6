package io.faro.common.admission;

import static java.util.Objects.requireNonNull;

import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

/**
 * One admission rule: it matches an application when each condition it sets holds (an exact user,
 * an exact queue, a glob over the name, a share of application names), and then admits or refuses
 * it. Written as {@code admit|deny [user=U] [queue=Q] [name=GLOB] [percent=N]}.
 *
 * <p>The share: an application's name falls in one of 100 buckets, CRC32C of its UTF-8 bytes mod
 * 100, and {@code percent=N} matches buckets 0 to N-1. The same name falls in the same bucket on
 * every master, run and release, so a rollout from 10 to 20 percent keeps the first 10 percent in.
 */
public record AdmissionRule(
    boolean deny, String user, String queue, String namePattern, int percent) {
  public AdmissionRule {
    requireNonNull(user, "user is null");
    requireNonNull(queue, "queue is null");
    requireNonNull(namePattern, "namePattern is null");
    if (percent < 1 || percent > 100) {
      throw new IllegalArgumentException("percent must be in 1..100, not " + percent);
    }
  }

  /** Whether this rule's conditions all hold for {@code app}. */
  public boolean matches(AppProfile app) {
    return (user.isEmpty() || user.equals(app.user()))
        && (queue.isEmpty() || queue.equals(app.queue()))
        && (namePattern.isEmpty() || globMatches(namePattern, app.name()))
        && (percent == 100 || bucket(app.name()) < percent);
  }

  /** The bucket of an application name, 0..99: CRC32C of its UTF-8 bytes, mod 100. */
  public static int bucket(String name) {
    CRC32C crc = new CRC32C();
    crc.update(name.getBytes(StandardCharsets.UTF_8));
    return (int) (crc.getValue() % 100);
  }

  /**
   * Whether {@code text} matches {@code glob} ({@code *} any run, {@code ?} one character). In at
   * most length(glob) x length(text) steps, whatever either holds: the name comes from the wire (a
   * backtracking regex over a hostile name could take the leader hours).
   */
  static boolean globMatches(String glob, String text) {
    int g = 0;
    int t = 0;
    int star = -1;
    int resume = 0;
    while (t < text.length()) {
      if (g < glob.length() && (glob.charAt(g) == '?' || glob.charAt(g) == text.charAt(t))) {
        g++;
        t++;
      } else if (g < glob.length() && glob.charAt(g) == '*') {
        star = g++;
        resume = t;
      } else if (star >= 0) {
        g = star + 1;
        t = ++resume;
      } else {
        return false;
      }
    }
    while (g < glob.length() && glob.charAt(g) == '*') {
      g++;
    }
    return g == glob.length();
  }

  /** The rule as it is written. */
  public String text() {
    StringBuilder text = new StringBuilder(deny ? "deny" : "admit");
    if (!user.isEmpty()) {
      text.append(" user=").append(user);
    }
    if (!queue.isEmpty()) {
      text.append(" queue=").append(queue);
    }
    if (!namePattern.isEmpty()) {
      text.append(" name=").append(namePattern);
    }
    if (percent != 100) {
      text.append(" percent=").append(percent);
    }
    return text.toString();
  }

  @Override
  public String toString() {
    return text();
  }
}
