package io.faro.common.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Optional;

/**
 * The bearer token of the operators' half of the HTTP ports ({@code Authorization: Bearer TOKEN}):
 * an HMAC under the admin secret of a fixed label, so that whoever holds the secret (members, and
 * {@code bin/faro admin --conf FILE}) derives it and nobody sends the secret itself. {@code
 * bin/faro admin http-token --conf FILE} prints it for other tools (curl, a dashboard's data
 * source).
 */
public final class AdminTokens {
  private static final String LABEL = "faro-http-admin-v1\n";

  private AdminTokens() {}

  /** The token that {@code admin} proves over HTTP. */
  public static String http(Secret admin) {
    return HexFormat.of().formatHex(Hmac.sha256(admin, LABEL));
  }

  /**
   * Whether {@code header} (an {@code Authorization} header's value, or null) carries {@code
   * expected}; compared in constant time.
   */
  public static boolean bears(String header, Optional<String> expected) {
    if (header == null || expected.isEmpty() || !header.startsWith("Bearer ")) {
      return false;
    }
    return MessageDigest.isEqual(
        header.substring("Bearer ".length()).strip().getBytes(StandardCharsets.UTF_8),
        expected.get().getBytes(StandardCharsets.UTF_8));
  }
}
