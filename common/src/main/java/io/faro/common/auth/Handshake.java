package io.faro.common.auth;

import java.security.MessageDigest;
import java.security.SecureRandom;

/**
 * The proofs of the connection handshake. Neither side ever sends the secret: each sends an
 * HMAC-SHA256, under the secret of the claimed identity, of a label naming its side, the identity
 * and both sides' fresh random nonces.
 *
 * <ol>
 *   <li>client: AuthStart {identity, target server, client nonce}
 *   <li>server: {server nonce, server proof}; the client checks the proof, so a server that does
 *       not hold the secret is found out before the client sends anything else
 *   <li>client: AuthFinish {client proof}; the server checks it and, if right, marks the connection
 *       as that identity
 * </ol>
 *
 * <p>A proof covers both nonces, so one recorded from another connection proves nothing on this
 * one, and the server the client means to reach, so a member's proof relayed to another server
 * proves nothing there. Without TLS the handshake proves who opened the connection, not that nobody
 * on the path changes what follows.
 */
public final class Handshake {
  /** Bytes of each side's nonce. */
  public static final int NONCE_BYTES = 32;

  private static final SecureRandom RANDOM = new SecureRandom();
  private static final String LABEL = "faro-auth-v1";

  private Handshake() {}

  public static byte[] nonce() {
    byte[] nonce = new byte[NONCE_BYTES];
    RANDOM.nextBytes(nonce);
    return nonce;
  }

  /** What the server sends to prove it holds {@code secret}. */
  public static byte[] serverProof(
      Secret secret, Identity identity, String target, byte[] clientNonce, byte[] serverNonce) {
    return proof(secret, "server", identity, target, clientNonce, serverNonce);
  }

  /** What the client sends to prove it holds {@code secret}. */
  public static byte[] clientProof(
      Secret secret, Identity identity, String target, byte[] clientNonce, byte[] serverNonce) {
    return proof(secret, "client", identity, target, clientNonce, serverNonce);
  }

  /** The target a client names to reach a master. */
  public static final String MASTER = "master";

  /** The target a client names to reach the worker server at {@code host:port}. */
  public static String worker(String host, int port) {
    return "worker@" + host + ":" + port;
  }

  /** Compares proofs in time independent of where they differ. */
  public static boolean matches(byte[] expected, byte[] given) {
    return MessageDigest.isEqual(expected, given);
  }

  private static byte[] proof(
      Secret secret,
      String side,
      Identity identity,
      String target,
      byte[] clientNonce,
      byte[] serverNonce) {
    return Hmac.sha256(
        secret,
        LABEL + " " + side + " " + identity.wire() + "\n" + target + "\n",
        clientNonce,
        serverNonce);
  }
}
