package io.faro.common.id;

/**
 * What every id from the wire must satisfy before anything keeps it: a bounded length (an app id
 * names a directory, and a file name has at most 255 bytes; every id is kept in maps, logs and the
 * masters' replicated state) and no control characters (an id with a newline would forge a log
 * line). Error messages show a bounded, escaped preview of the refused id, never the id itself.
 */
final class IdRules {
  /** Longest app id: its directory name (escaped, plus a hash) stays far below 255 bytes. */
  static final int MAX_APP_ID_LENGTH = 200;
  /** Longest worker id (by default host:port). */
  static final int MAX_WORKER_ID_LENGTH = 255;
  private static final int PREVIEW = 64;

  private IdRules() {}

  /** @throws IllegalArgumentException naming {@code what} when {@code value} breaks a rule */
  static void check(String what, String value, int maxLength) {
    if (value.isBlank()) {
      throw new IllegalArgumentException(what + " is blank");
    }
    if (value.length() > maxLength) {
      throw new IllegalArgumentException(what + " has " + value.length() + " characters, at most " + maxLength
          + " are allowed: " + preview(value));
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
        throw new IllegalArgumentException(what + " holds a control character at " + i + ": " + preview(value));
      }
    }
  }

  /** At most {@value #PREVIEW} characters of {@code value}, control characters escaped, quoted. */
  static String preview(String value) {
    StringBuilder b = new StringBuilder("'");
    int n = Math.min(value.length(), PREVIEW);
    for (int i = 0; i < n; i++) {
      char c = value.charAt(i);
      if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
        b.append(String.format("\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    b.append('\'');
    if (value.length() > n) {
      b.append("...(").append(value.length()).append(" characters)");
    }
    return b.toString();
  }
}
