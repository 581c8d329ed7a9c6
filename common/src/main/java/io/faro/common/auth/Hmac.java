package io.faro.common.auth;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/** HMAC-SHA256 under a {@link Secret}: every proof, derived secret and grant is one. */
final class Hmac {
  private Hmac() {}

  /** The HMAC of {@code text} (UTF-8) followed by {@code more}, under {@code key}. */
  static byte[] sha256(Secret key, String text, byte[]... more) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key.bytes(), "HmacSHA256"));
      mac.update(text.getBytes(StandardCharsets.UTF_8));
      for (byte[] bytes : more) {
        mac.update(bytes);
      }
      return mac.doFinal();
    } catch (GeneralSecurityException e) {
      // HmacSHA256 is in every JDK.
      throw new IllegalStateException("HmacSHA256 is not available", e);
    }
  }
}
