package io.faro.common.network;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import io.faro.common.auth.AuthSettings;
import io.faro.common.auth.Handshake;
import io.faro.common.auth.Identity;
import io.faro.common.auth.Secret;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.log.LogSafe;
import io.faro.common.log.RateLimitedLog;
import io.faro.common.version.Compatibility;
import io.faro.proto.AuthFinishRequest;
import io.faro.proto.AuthFinishResponse;
import io.faro.proto.AuthStartRequest;
import io.faro.proto.AuthStartResponse;
import io.faro.proto.ErrorResponse;
import io.faro.proto.MessageType;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import java.net.InetSocketAddress;
import java.util.Optional;

/**
 * A server's side of one connection's handshake ({@link Handshake}) and of the check that follows
 * it on every request ({@link RequestHandler#refusal}). A failed proof, a handshake out of order or
 * a refused request is answered UNAUTHENTICATED (or INVALID_REQUEST) and the connection closed,
 * with a rate-limited warning naming the peer. Confined to the connection's event loop.
 */
final class ServerAuth {
  private final String serverName;
  private final AuthSettings settings;
  private final RateLimitedLog<PeerWarning> warnings;
  // The handshake under way: the identity claimed and both nonces, until AuthFinish.
  private Identity claimed;
  private String target;
  private byte[] clientNonce;
  private byte[] serverNonce;
  private int protocol;

  ServerAuth(String serverName, AuthSettings settings, RateLimitedLog<PeerWarning> warnings) {
    this.serverName = requireNonNull(serverName, "serverName is null");
    this.settings = requireNonNull(settings, "settings is null");
    this.warnings = requireNonNull(warnings, "warnings is null");
  }

  static boolean isHandshake(MessageType type) {
    return type == MessageType.AUTH_START_REQUEST || type == MessageType.AUTH_FINISH_REQUEST;
  }

  /**
   * Answers one handshake frame; {@code oldestProtocol} is the oldest wire protocol the server
   * takes now ({@link RequestHandler#oldestProtocol}).
   */
  void handshake(Channel channel, Frame frame, int oldestProtocol) {
    try {
      if (!settings.enabled()) {
        throw new FaroException(
            ErrorCode.UNAUTHENTICATED,
            serverName + " does not authenticate connections (faro.auth.enabled is false here)");
      }
      if (frame.type() == MessageType.AUTH_START_REQUEST) {
        start(channel, frame.requestId(), (AuthStartRequest) frame.meta(), oldestProtocol);
      } else {
        finish(channel, frame.requestId(), (AuthFinishRequest) frame.meta());
      }
    } catch (FaroException e) {
      refuse(channel, frame.requestId(), e.code(), e.getMessage());
    }
  }

  /** Whether {@code handler} lets this connection send {@code type}; if not, answers and closes. */
  boolean admits(
      Channel channel, RequestHandler handler, MessageType type, Message meta, long requestId) {
    if (!settings.enabled()) {
      return true;
    }
    Optional<String> refusal = handler.refusal(type, meta, Identity.of(channel));
    if (refusal.isEmpty()) {
      return true;
    }
    refuse(channel, requestId, ErrorCode.UNAUTHENTICATED, refusal.get());
    return false;
  }

  /**
   * Refuses a request that reached this TLS port over a connection without TLS, saying so, and
   * closes the connection.
   */
  void refuseUnencrypted(Channel channel, long requestId) {
    refuse(channel, requestId, ErrorCode.UNAUTHENTICATED, unencrypted(serverName));
  }

  /** Why {@code serverName}, a TLS port, refuses a connection without TLS. */
  static String unencrypted(String serverName) {
    return serverName
        + " takes TLS connections only (faro.tls.enabled is true there); this client "
        + "connected without TLS: set faro.tls.enabled and faro.tls.trust.file on it";
  }

  private void start(Channel channel, long requestId, AuthStartRequest start, int oldestProtocol) {
    if (claimed != null || !Identity.of(channel).equals(Identity.ANONYMOUS)) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST, "this connection already started its handshake");
    }
    Identity identity = Identity.fromWire(start.getIdentity());
    if (start.getClientNonce().size() != Handshake.NONCE_BYTES) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST,
          "a client nonce has "
              + Handshake.NONCE_BYTES
              + " bytes, not "
              + start.getClientNonce().size());
    }
    if (identity.kind() == Identity.Kind.CLUSTER || identity.kind() == Identity.Kind.ADMIN) {
      checkTarget(channel, start.getTarget());
    }
    int spoken = Compatibility.negotiated(start.getProtocolVersion());
    if (spoken < oldestProtocol) {
      throw new FaroException(
          ErrorCode.UNSUPPORTED_VERSION,
          "the client speaks Faro wire protocol "
              + spoken
              + (start.getProtocolVersion() == 0
                  ? " (a release from before versioned handshakes)"
                  : "")
              + " and "
              + serverName
              + " (Faro "
              + Compatibility.release()
              + ", protocol "
              + Compatibility.PROTOCOL
              + ") takes "
              + oldestProtocol
              + " or newer at this cluster's feature level: upgrade the client (its jar or"
              + " release) to one of protocol "
              + oldestProtocol
              + " or newer");
    }
    Secret secret = secretOf(identity);
    claimed = identity;
    protocol = spoken;
    target = start.getTarget();
    clientNonce = start.getClientNonce().toByteArray();
    serverNonce = Handshake.nonce();
    answer(
        channel,
        requestId,
        AuthStartResponse.newBuilder()
            .setServerNonce(ByteString.copyFrom(serverNonce))
            .setProtocolVersion(spoken)
            .setServerProof(
                ByteString.copyFrom(
                    Handshake.serverProof(secret, identity, target, clientNonce, serverNonce)))
            .build());
  }

  private void finish(Channel channel, long requestId, AuthFinishRequest finish) {
    if (claimed == null) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST, "AuthFinish before AuthStart on this connection");
    }
    Identity identity = claimed;
    claimed = null;
    byte[] expected =
        Handshake.clientProof(secretOf(identity), identity, target, clientNonce, serverNonce);
    if (!Handshake.matches(expected, finish.getClientProof().toByteArray())) {
      throw new FaroException(
          ErrorCode.UNAUTHENTICATED,
          "wrong proof for identity " + identity.wire() + ": the secrets differ");
    }
    Identity.bind(channel, identity);
    PeerProtocol.bind(channel, protocol);
    answer(channel, requestId, AuthFinishResponse.getDefaultInstance());
  }

  /**
   * A member's proof is for one server: this one must be the server the client means to reach
   * ({@code self} for a master, {@code self:<port of this connection>} for a worker's), else a
   * proof relayed here from another server would pass.
   */
  private void checkTarget(Channel channel, String wanted) {
    String self = settings.self();
    if (self.isEmpty()) {
      return;
    }
    String here =
        channel.localAddress() instanceof InetSocketAddress local
            ? self + ":" + local.getPort()
            : self;
    // A worker's servers share a host with other workers' perhaps: their port is part of the name.
    boolean named = self.contains("@") ? wanted.equals(here) : wanted.equals(self);
    if (!named) {
      throw new FaroException(
          ErrorCode.UNAUTHENTICATED,
          "this is "
              + (self.equals(Handshake.MASTER) ? self : here)
              + ", not "
              + (wanted.isEmpty() ? "an unnamed server" : LogSafe.id(wanted))
              + ": a member's proof is for the server it names");
    }
  }

  private Secret secretOf(Identity identity) {
    return settings
        .secretOf(identity)
        .orElseThrow(
            () ->
                new FaroException(
                    ErrorCode.UNAUTHENTICATED,
                    serverName
                        + " holds no "
                        + identity.wire()
                        + " secret"
                        + (identity.equals(Identity.ADMIN)
                            ? " (faro.auth.admin.secret.file is not set here)"
                            : "")));
  }

  private static void answer(Channel channel, long requestId, Message meta) {
    channel.writeAndFlush(new OutboundFrame(FrameKind.RESPONSE, requestId, meta, null));
  }

  /** Whether a handshake started on this connection and has not finished. */
  boolean inHandshake() {
    return claimed != null;
  }

  /** Answers {@code requestId} with the refusal, logs it, and closes the connection. */
  void refuse(Channel channel, long requestId, ErrorCode code, String message) {
    warnings.warn(
        PeerWarning.AUTH_FAILED,
        "{}: closing the connection from {}: {}",
        serverName,
        channel.remoteAddress(),
        message);
    ErrorResponse error =
        ErrorResponse.newBuilder()
            .setCode(code.toProto())
            .setMessage(message)
            .setRetryable(false)
            .build();
    channel
        .writeAndFlush(new OutboundFrame(FrameKind.ERROR, requestId, error, null))
        .addListener(ChannelFutureListener.CLOSE);
  }
}
