package io.faro.common.network;

import com.google.protobuf.ByteString;
import io.faro.common.auth.AuthOptions;
import io.faro.common.auth.Handshake;
import io.faro.common.auth.Identity;
import io.faro.common.auth.Secret;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.version.Compatibility;
import io.faro.proto.AuthFinishRequest;
import io.faro.proto.AuthFinishResponse;
import io.faro.proto.AuthStartRequest;
import io.faro.proto.AuthStartResponse;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * The client's side of the handshake ({@link Handshake}) on a connection {@link ClientPool} just
 * opened: proves the connection's credentials to the server and checks the server's proof that it
 * holds the same secret. A connection whose handshake fails is closed and its requests fail with
 * UNAUTHENTICATED (or the server's own error code), naming why.
 */
final class ClientAuthentication {
  private ClientAuthentication() {}

  /**
   * Completes {@code result} with {@code client} once it proved {@code credentials}, at once when
   * they prove nothing.
   *
   * @param targets how the server at the client's address is named in the handshake
   */
  static void authenticate(
      TransportClient client,
      AuthOptions.Credentials credentials,
      Function<HostPort, String> targets,
      CompletableFuture<TransportClient> result) {
    if (!credentials.proves()) {
      result.complete(client);
      return;
    }
    Identity identity = credentials.identity();
    String failure = "cannot authenticate to " + client.remote() + " as " + identity.wire() + ": ";
    if (credentials.secret().isEmpty()) {
      client.close();
      result.completeExceptionally(noSecret(failure, identity));
      return;
    }
    Secret secret = credentials.secret().get();
    byte[] clientNonce = Handshake.nonce();
    String target = targets.apply(client.remote());
    client
        .call(
            AuthStartRequest.newBuilder()
                .setIdentity(identity.wire())
                .setTarget(target)
                .setClientNonce(ByteString.copyFrom(clientNonce))
                .setProtocolVersion(Compatibility.PROTOCOL)
                .build(),
            AuthStartResponse.class)
        .thenCompose(
            start -> {
              byte[] serverNonce = start.getServerNonce().toByteArray();
              if (serverNonce.length != Handshake.NONCE_BYTES
                  || !Handshake.matches(
                      Handshake.serverProof(secret, identity, target, clientNonce, serverNonce),
                      start.getServerProof().toByteArray())) {
                throw new FaroException(
                    ErrorCode.UNAUTHENTICATED,
                    "the server's proof is wrong: it does not hold the same secret");
              }
              // A server from before versioned handshakes states none: it speaks protocol 1.
              client.speaks(Compatibility.negotiated(start.getProtocolVersion()));
              return client.call(
                  AuthFinishRequest.newBuilder()
                      .setClientProof(
                          ByteString.copyFrom(
                              Handshake.clientProof(
                                  secret, identity, target, clientNonce, serverNonce)))
                      .build(),
                  AuthFinishResponse.class);
            })
        .whenComplete(
            (finished, error) -> {
              if (error == null) {
                client.provenAs(identity);
                result.complete(client);
                return;
              }
              client.close();
              Throwable cause = Futures.unwrap(error);
              ErrorCode code =
                  cause instanceof FaroException fe && fe.code() != ErrorCode.UNAUTHENTICATED
                      ? fe.code()
                      : ErrorCode.UNAUTHENTICATED;
              result.completeExceptionally(
                  new FaroException(code, failure + cause.getMessage(), cause));
            });
  }

  /** The failure of a process that would prove {@code identity} but holds no secret for it. */
  private static FaroException noSecret(String failure, Identity identity) {
    return new FaroException(
        ErrorCode.UNAUTHENTICATED,
        failure
            + "this process holds no "
            + identity.wire()
            + " secret ("
            + (identity.equals(Identity.ADMIN)
                ? AuthOptions.ADMIN_SECRET_FILE.key()
                : AuthOptions.CLUSTER_SECRET_FILE.key())
            + ")");
  }
}
