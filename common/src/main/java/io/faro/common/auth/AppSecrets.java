package io.faro.common.auth;

import io.faro.common.id.AppId;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Per-application secrets, derived rather than stored or sent between members.
 *
 * <p>A driver registers its application with a random registration token it keeps to itself. The
 * master makes the registration's public nonce from it (the first {@value #NONCE_CHARS} hex
 * characters of its SHA-256) and answers the app's secret: an HMAC-SHA256 under the cluster secret
 * of the app id and the nonce. Every master and worker holds the cluster secret, so each derives
 * the secret of any app identity a connection claims, and checks its proof, without asking anyone;
 * nothing but the registration answer carries an app secret, and a restarted worker or a new leader
 * needs nothing to go on. The token makes registration idempotent (a retry whose first answer was
 * lost gets the same nonce and secret) without letting anyone who saw the nonce register in its
 * name: the nonce is a hash of the token.
 */
public final class AppSecrets {
  /** Hex characters of a registration nonce. */
  public static final int NONCE_CHARS = 32;

  /** Bytes of a registration token. */
  public static final int TOKEN_BYTES = 32;

  private static final SecureRandom RANDOM = new SecureRandom();
  private static final String LABEL = "faro-app-secret-v1\n";

  private AppSecrets() {}

  /** A new registration token, for one driver's registration. */
  public static byte[] token() {
    byte[] token = new byte[TOKEN_BYTES];
    RANDOM.nextBytes(token);
    return token;
  }

  /** The public nonce of the registration made with {@code token}. */
  public static String nonce(byte[] token) {
    try {
      byte[] hash = MessageDigest.getInstance("SHA-256").digest(token);
      return HexFormat.of().formatHex(hash).substring(0, NONCE_CHARS);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA-256 is not available", e);
    }
  }

  /** Whether {@code text} has the form of a registration nonce. */
  public static boolean isNonce(String text) {
    if (text.length() != NONCE_CHARS) {
      return false;
    }
    for (int i = 0; i < text.length(); i++) {
      if (Character.digit(text.charAt(i), 16) < 0 || Character.isUpperCase(text.charAt(i))) {
        return false;
      }
    }
    return true;
  }

  /** The secret of {@code app}'s registration with {@code nonce}, under the cluster secret. */
  public static Secret derive(Secret cluster, AppId app, String nonce) {
    return Secret.ofBytes(Hmac.sha256(cluster, LABEL + app.value() + "\n" + nonce));
  }
}
