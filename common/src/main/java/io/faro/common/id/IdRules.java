package io.faro.common.id;

import io.faro.common.log.LogSafe;

/**
 * What every id from the wire must satisfy before anything keeps it: a bounded length (an app id
 * names a directory, and a file name has at most 255 bytes; every id is kept in maps, logs and the
 * masters' replicated state) and no control characters (an id with a newline would forge a log
 * line). Error messages show the refused id through LogSafe, never the id itself.
 */
final class IdRules {
  /** Longest app id: its directory name (escaped, plus a hash) stays far below 255 bytes. */
  static final int MAX_APP_ID_LENGTH = 200;

  /** Longest worker id (by default host:port). */
  static final int MAX_WORKER_ID_LENGTH = 255;

  private IdRules() {}

  /**
   * @throws IllegalArgumentException naming {@code what} when {@code value} breaks a rule
   */
  static void check(String what, String value, int maxLength) {
    if (value.isBlank()) {
      throw new IllegalArgumentException(what + " is blank");
    }
    if (value.length() > maxLength) {
      throw new IllegalArgumentException(
          what
              + " has "
              + value.length()
              + " characters, at most "
              + maxLength
              + " are allowed: "
              + preview(value));
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
        throw new IllegalArgumentException(
            what + " holds a control character at " + i + ": " + preview(value));
      }
    }
  }

  /** The id as error messages show it: bounded, control characters replaced (see LogSafe). */
  static String preview(String value) {
    return "'" + LogSafe.id(value) + "'";
  }
}
