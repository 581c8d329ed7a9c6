package io.faro.common.network;

import static io.faro.common.config.ConfigOption.durationOption;
import static io.faro.common.config.ConfigOption.intOption;
import static io.faro.common.config.ConfigOption.sizeOption;

import io.faro.common.config.ConfigOption;
import io.faro.common.config.FaroConf;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/** Transport settings, shared by every process. */
public final class NetworkOptions {
  public static final ConfigOption<Integer> IO_THREADS =
      intOption(
          "faro.network.io.threads",
          0,
          0,
          1024,
          "threads",
          "Netty event-loop threads per server or client pool; 0 means the number of cores.");
  public static final ConfigOption<Duration> CONNECT_TIMEOUT =
      durationOption(
          "faro.network.connect.timeout",
          "10s",
          Duration.ofMillis(100),
          "How long to wait for a TCP connection to a master, worker or lifecycle manager.");
  public static final ConfigOption<Duration> REQUEST_TIMEOUT =
      durationOption(
          "faro.network.request.timeout",
          "120s",
          Duration.ofMillis(100),
          "How long to wait for the answer to one request before failing it with TIMEOUT.");
  public static final ConfigOption<Long> MAX_FRAME_SIZE =
      sizeOption(
          "faro.network.max.frame.size",
          "128m",
          64 * 1024,
          Integer.MAX_VALUE,
          "Largest frame accepted, checked before any buffer is allocated. Must exceed the "
              + "largest push frame and the largest fetched chunk.");

  public static final ConfigOption<Long> MAX_REQUEST_SIZE =
      sizeOption(
          "faro.network.max.request.size",
          "32m",
          64 * 1024,
          Integer.MAX_VALUE,
          "Largest request a server takes on a port that carries no data (masters, a worker's RPC "
              + "and fetch ports, the lifecycle manager): a peer that half-sends a frame pins at most "
              + "this much there. Push ports take frames up to faro.network.max.frame.size.");
  public static final ConfigOption<Duration> IDLE_TIMEOUT =
      durationOption(
          "faro.network.idle.timeout",
          "10m",
          Duration.ofSeconds(1),
          "A server closes a connection that has sent and received nothing for this long while no "
              + "request of it is in progress: half-open connections of peers that vanished, and "
              + "idle ones. Clients open a new connection on their next request.");
  public static final ConfigOption<Integer> MAX_CONNECTIONS_PER_PEER =
      intOption(
          "faro.network.max.connections.per.peer",
          512,
          1,
          1_000_000,
          "connections",
          "Most connections one server keeps from one peer address; more are closed as they "
              + "arrive. A host's executors each open one connection per worker port.");
  public static final ConfigOption<Long> MAX_PENDING_ANSWER_BYTES =
      sizeOption(
          "faro.network.max.pending.answer.bytes",
          "256m",
          1024 * 1024,
          Long.MAX_VALUE,
          "A server closes a connection whose peer leaves more than this many bytes of answers "
              + "unread (it pipelines requests and never reads): answers must not pile up in memory.");

  public static final ConfigOption<Long> MAX_UNAUTHENTICATED_FRAME_SIZE =
      sizeOption(
          "faro.network.max.unauthenticated.frame.size",
          "8k",
          1024,
          1024 * 1024,
          "Largest frame a server with faro.auth.enabled takes from a connection that has not "
              + "proved who it is: the handshake, and the few requests anyone may send (an app's "
              + "registration, status). Any other request before the proof is answered "
              + "UNAUTHENTICATED and closes the connection, before anything of it is buffered or "
              + "parsed; such a connection's bytes are never charged to a worker's memory budget.");
  public static final ConfigOption<Duration> HANDSHAKE_TIMEOUT =
      durationOption(
          "faro.network.handshake.timeout",
          "5s",
          Duration.ofMillis(100),
          "With faro.auth.enabled, a connection that has not proved who it is this long after it "
              + "opened is closed if it sent no whole request yet, holds part of a frame, or "
              + "started a handshake it did not finish.");
  public static final ConfigOption<Integer> MAX_META_OBJECTS =
      intOption(
          "faro.network.max.meta.objects",
          2_000_000,
          1_000,
          100_000_000,
          "objects",
          "Most objects (embedded messages, strings, unknown fields) the protobuf header of one "
              + "request may hold, counted before it is parsed: each costs some 40 bytes of heap "
              + "however few bytes it takes on the wire (two per shuffle a worker's heartbeat "
              + "lists, about eight per location a reservation holds). A request over it closes "
              + "its connection. Members (the cluster secret proved) are not bounded by it.");
  public static final ConfigOption<Integer> MAX_PARTS_PER_PUSH =
      intOption(
          "faro.network.max.parts.per.push",
          65_536,
          16,
          10_000_000,
          "parts",
          "Most batches one push frame may carry (never more than its body can hold: a batch "
              + "has a 28-byte header), checked before its header is parsed. Map tasks cut their "
              + "frames at it.");

  public static final ConfigOption<Long> MAX_PARTIAL_BYTES_PER_PEER =
      sizeOption(
          "faro.network.max.partial.bytes.per.peer",
          "256m",
          1024 * 1024,
          Long.MAX_VALUE,
          "On a port without data (masters, a worker's RPC and fetch ports, the lifecycle "
              + "manager): most bytes of frames still arriving that all connections of one peer "
              + "address may hold at once; the connection whose bytes go over it is closed. A "
              + "proven peer's 512 connections could otherwise each hold most of a "
              + "faro.network.max.request.size frame. Push ports charge such bytes to the memory "
              + "budget instead, which pauses reading.");

  public static final List<ConfigOption<?>> ALL =
      List.of(
          IO_THREADS,
          CONNECT_TIMEOUT,
          REQUEST_TIMEOUT,
          MAX_FRAME_SIZE,
          MAX_REQUEST_SIZE,
          IDLE_TIMEOUT,
          MAX_CONNECTIONS_PER_PEER,
          MAX_PENDING_ANSWER_BYTES,
          MAX_UNAUTHENTICATED_FRAME_SIZE,
          HANDSHAKE_TIMEOUT,
          MAX_META_OBJECTS,
          MAX_PARTS_PER_PUSH,
          MAX_PARTIAL_BYTES_PER_PEER);

  private NetworkOptions() {}

  /**
   * What a server takes from one connection before and after it proved itself (see {@link
   * ServerFrameLimits}).
   *
   * @param unauthenticatedFrameSize see {@link #MAX_UNAUTHENTICATED_FRAME_SIZE}
   * @param handshakeTimeout see {@link #HANDSHAKE_TIMEOUT}
   * @param metaObjects see {@link #MAX_META_OBJECTS}
   * @param partsPerPush see {@link #MAX_PARTS_PER_PUSH}
   * @param partialBytesPerPeer see {@link #MAX_PARTIAL_BYTES_PER_PEER}
   */
  public record Limits(
      int unauthenticatedFrameSize,
      Duration handshakeTimeout,
      int metaObjects,
      int partsPerPush,
      long partialBytesPerPeer) {
    public static final Limits DEFAULTS =
        new Limits(
            (int) ConfigOption.parseSize(MAX_UNAUTHENTICATED_FRAME_SIZE.defaultText()),
            Duration.ofSeconds(5),
            2_000_000,
            65_536,
            ConfigOption.parseSize(MAX_PARTIAL_BYTES_PER_PEER.defaultText()));

    public Limits {
      Objects.requireNonNull(handshakeTimeout, "handshakeTimeout is null");
    }

    static Limits from(FaroConf conf) {
      return new Limits(
          (int) (long) conf.get(MAX_UNAUTHENTICATED_FRAME_SIZE),
          conf.get(HANDSHAKE_TIMEOUT),
          conf.get(MAX_META_OBJECTS),
          conf.get(MAX_PARTS_PER_PUSH),
          conf.get(MAX_PARTIAL_BYTES_PER_PEER));
    }
  }
}
