package io.faro.common.network;

import io.netty.handler.codec.DecoderException;

/**
 * The kinds of warning a server or client logs about what a peer did. Each kind is rate-limited on
 * its own (see {@link io.faro.common.log.RateLimitedLog}): a port scanner sends garbage frames and
 * resets connections thousands of times a second.
 */
enum PeerWarning {
  /** A frame that cannot be decoded: too long, truncated header, unknown kind or type, bad meta. */
  BAD_FRAME,
  /** A decodable frame of the wrong kind for this side (a request sent to a client, say). */
  UNEXPECTED_FRAME,
  /** The connection failed under us: reset by the peer, broken pipe. */
  CONNECTION_ERROR,
  /** A request whose handler failed with something other than a coded FaroException. */
  REQUEST_FAILED,
  /** A connection closed on purpose instead of answering (fault injection). */
  CONNECTION_DROPPED,
  /** A connection closed by a limit: idle too long, too many from one peer, answers left unread. */
  CONNECTION_LIMITED,
  /** A failed handshake or a request the connection's identity may not send. */
  AUTH_FAILED;

  /** Decoder failures (CorruptedFrameException, TooLongFrameException) are bad frames. */
  static PeerWarning kindOf(Throwable cause) {
    if (cause instanceof DecoderException) {
      return BAD_FRAME;
    }
    return CONNECTION_ERROR;
  }
}
