package io.faro.common.log;

/**
 * Makes text that came from the network safe to put in a log line. Ids, reasons and messages sent
 * by peers (an app id, a worker id, a slot request id, a reader's loss report) are arbitrary
 * strings: a newline in one forges a second log line, a terminal escape rewrites the operator's
 * screen, and a 20,000-character id drowns the line it is in.
 *
 * <p>Control characters (below 0x20, 0x7f and the C1 range 0x80-0x9f, which holds NEL), the Unicode
 * line and paragraph separators, bidirectional overrides (they reorder what a terminal shows) and
 * unpaired surrogates each become {@code '?'}; text longer than the limit is cut and ends with a
 * marker naming its full length, e.g. {@code "aaaa…(20000 chars)"}. Text that needs neither is
 * returned as it is, without copying: the common case costs one scan.
 *
 * <p>Stateless and thread-safe.
 */
public final class LogSafe {
  /** Characters an id keeps in a log line. A UUID or a Spark app id fits with room to spare. */
  public static final int MAX_ID_LENGTH = 128;

  /** Characters a free-text reason or remote message keeps in a log line. */
  public static final int MAX_TEXT_LENGTH = 4096;

  private static final char REPLACEMENT = '?';

  private LogSafe() {}

  /** An id (app, worker, shuffle key, request id) fit for one log line; "null" for null. */
  public static String id(String id) {
    return clean(id, MAX_ID_LENGTH);
  }

  /** A free-text reason or message from a peer, fit for one log line; "null" for null. */
  public static String text(String text) {
    return clean(text, MAX_TEXT_LENGTH);
  }

  /** {@code text} with unsafe characters replaced and cut to {@code maxLength} characters. */
  public static String clean(String text, int maxLength) {
    if (maxLength < 1) {
      throw new IllegalArgumentException("maxLength must be positive: " + maxLength);
    }
    if (text == null) {
      return "null";
    }
    int length = text.length();
    if (length <= maxLength && isSafe(text)) {
      return text;
    }
    int keep = Math.min(length, maxLength);
    // Never cut a surrogate pair in two: the half left behind would be unpaired.
    if (keep < length
        && Character.isHighSurrogate(text.charAt(keep - 1))
        && Character.isLowSurrogate(text.charAt(keep))) {
      keep--;
    }
    StringBuilder out = new StringBuilder(keep + 24);
    for (int i = 0; i < keep; i++) {
      char c = text.charAt(i);
      if (Character.isHighSurrogate(c)
          && i + 1 < keep
          && Character.isLowSurrogate(text.charAt(i + 1))) {
        out.append(c).append(text.charAt(i + 1));
        i++;
      } else {
        out.append(unsafe(c) ? REPLACEMENT : c);
      }
    }
    if (keep < length) {
      out.append("…(").append(length).append(" chars)");
    }
    return out.toString();
  }

  private static boolean isSafe(String text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (Character.isHighSurrogate(c)
          && i + 1 < text.length()
          && Character.isLowSurrogate(text.charAt(i + 1))) {
        i++;
      } else if (unsafe(c)) {
        return false;
      }
    }
    return true;
  }

  /** Whether {@code c}, outside a valid surrogate pair, must not reach a log line. */
  private static boolean unsafe(char c) {
    return c < 0x20
        || (c >= 0x7f && c <= 0x9f)
        || c == '\u2028'
        || c == '\u2029'
        || (c >= '\u202a' && c <= '\u202e') // bidi embeddings and overrides
        || (c >= '\u2066' && c <= '\u2069') // bidi isolates
        || Character.isSurrogate(c); // reached only when unpaired
  }
}
