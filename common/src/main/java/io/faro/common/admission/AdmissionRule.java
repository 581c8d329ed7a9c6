package io.faro.common.admission;

import static java.util.Objects.requireNonNull;

import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;
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
        && (namePattern.isEmpty() || glob(namePattern).matcher(app.name()).matches())
        && (percent == 100 || bucket(app.name()) < percent);
  }

  /** The bucket of an application name, 0..99: CRC32C of its UTF-8 bytes, mod 100. */
  public static int bucket(String name) {
    CRC32C crc = new CRC32C();
    crc.update(name.getBytes(StandardCharsets.UTF_8));
    return (int) (crc.getValue() % 100);
  }

  private static Pattern glob(String glob) {
    StringBuilder regex = new StringBuilder();
    for (char c : glob.toCharArray()) {
      switch (c) {
        case '*' -> regex.append(".*");
        case '?' -> regex.append('.');
        default -> regex.append(Pattern.quote(String.valueOf(c)));
      }
    }
    return Pattern.compile(regex.toString(), Pattern.DOTALL);
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
