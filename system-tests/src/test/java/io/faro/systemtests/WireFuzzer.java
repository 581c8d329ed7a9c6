package io.faro.systemtests;

import com.google.protobuf.Message;
import io.faro.common.batch.BatchEncoder;
import io.faro.proto.AppHeartbeatRequest;
import io.faro.proto.ClusterStatusRequest;
import io.faro.proto.CommitFilesRequest;
import io.faro.proto.DiskLoadP;
import io.faro.proto.DiskSpecP;
import io.faro.proto.DiskTierP;
import io.faro.proto.FetchChunkRequest;
import io.faro.proto.MasterStatusRequest;
import io.faro.proto.MessageType;
import io.faro.proto.OpenStreamRequest;
import io.faro.proto.PartitionLocationP;
import io.faro.proto.PushPart;
import io.faro.proto.PushRequest;
import io.faro.proto.RegisterAppRequest;
import io.faro.proto.RegisterWorkerRequest;
import io.faro.proto.RequestSlotsRequest;
import io.faro.proto.ReserveSlotsRequest;
import io.faro.proto.RoleP;
import io.faro.proto.SetWorkerAdmissionRequest;
import io.faro.proto.ShuffleKeyP;
import io.faro.proto.TransferLeaderRequest;
import io.faro.proto.UnregisterAppRequest;
import io.faro.proto.UnregisterShuffleRequest;
import io.faro.proto.WorkerEndpointP;
import io.faro.proto.WorkerHeartbeatRequest;
import io.faro.proto.WorkerStatusRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A seeded, bounded generator of hostile traffic for Faro's ports: well-formed requests of every
 * message type with adversarial fields, mutated frames, corrupt headers, truncated and oversized
 * frames, and the requests that once took a process down or changed a job's answer (a slot request
 * for 2^31-1 partitions, reservations of more locations than allowed, ids of 20,000 characters or
 * with a newline, a commit of a running job's shuffle, half-sent huge frames).
 *
 * <p>It stays clear of what only authentication can refuse (issue "Let no one in"): well-formed
 * registrations of impostor workers, admission changes and unregistrations of real workers, apps
 * and shuffles, a valid leader transfer, and pushes of CRC-valid batches into a real app's
 * partitions. Those need a secret; everything here must be refused without one.
 *
 * <p>Confined to the thread that calls {@link #run}, except the answer drains (one daemon thread
 * per connection) and {@link #realShuffles}, which the caller may update.
 */
final class WireFuzzer {
  /** One port to fuzz. */
  record Target(String name, InetSocketAddress address) {}

  /** What a run sent. */
  record Stats(long frames, long connections, long bytes, long writeFailures) {}

  private static final int KIND_REQUEST = 1;

  /** Request types a peer may send; response types are sent too, as nonsense. */
  private static final MessageType[] TYPES = MessageType.values();

  private final Random random;
  private final int maxFrameSize;

  /** Shuffles of running jobs (app id, shuffle id), for the commits a stray client could send. */
  final List<ShuffleKeyP> realShuffles = new CopyOnWriteArrayList<>();

  private final byte[] validBatch;
  private final AtomicLong bytes = new AtomicLong();
  private long nextRequestId;

  WireFuzzer(long seed, int maxFrameSize) {
    this.random = new Random(seed);
    this.maxFrameSize = maxFrameSize;
    BatchEncoder encoder = new BatchEncoder(true, UnpooledByteBufAllocator.DEFAULT);
    byte[] raw = new byte[300];
    random.nextBytes(raw);
    ByteBuf batch = encoder.encode(0, 0, 0, raw, 0, raw.length);
    validBatch = new byte[batch.readableBytes()];
    batch.readBytes(validBatch);
    batch.release();
  }

  /**
   * Sends {@code frames} frames spread over {@code targets}, {@code connectionsPerTarget}
   * connections each (reopened when the server closes one), and {@code halfSent} connections that
   * send the first part of a frame just under the maximum size and hold it until the end.
   */
  Stats run(List<Target> targets, long frames, int connectionsPerTarget, int halfSent)
      throws IOException {
    List<Connection> held = new ArrayList<>();
    for (int i = 0; i < halfSent; i++) {
      Target target = targets.get(i % targets.size());
      Connection c = new Connection(target);
      if (c.open()) {
        byte[] head =
            ByteBuffer.allocate(19)
                .putInt(maxFrameSize - 16)
                .put((byte) KIND_REQUEST)
                .putShort((short) MessageType.PUSH_REQUEST_VALUE)
                .putLong(1)
                .putInt(0)
                .array();
        c.write(head);
        c.write(new byte[8 << 20]);
        held.add(c);
      }
    }
    List<Connection> connections = new ArrayList<>();
    for (Target target : targets) {
      for (int i = 0; i < connectionsPerTarget; i++) {
        connections.add(new Connection(target));
      }
    }
    long sent = 0;
    long opened = held.size();
    long failures = 0;
    while (sent < frames) {
      Connection c = connections.get(random.nextInt(connections.size()));
      if (!c.isOpen()) {
        if (!c.open()) {
          failures++;
          continue;
        }
        opened++;
      }
      // A burst of frames on one connection, pipelined, as a busy client sends them.
      int burst = 1 + random.nextInt(64);
      for (int i = 0; i < burst && sent < frames && c.isOpen(); i++) {
        sent++;
        if (!sendOne(c)) {
          failures++;
        }
      }
      c.flush();
    }
    connections.forEach(Connection::close);
    held.forEach(Connection::close);
    return new Stats(sent, opened, bytes.get(), failures);
  }

  /**
   * For every request type, one frame as large as its port takes (just under {@code dataPortSize}
   * on the push port, {@code controlPortSize} elsewhere) whose meta is nothing but empty entries of
   * the type's first repeated field (an embedded message, string or bytes: an object each once
   * parsed, for 2 bytes on the wire), or of an unknown field where it has none; and three push
   * frames of ~120 MiB of empty parts on three connections. Each is sent whole unless the server
   * closes first (a refusal on the header). Returns the frames sent or cut short by a close.
   */
  int floodRepeated(Target push, List<Target> control, int dataPortSize, int controlPortSize) {
    int sent = 0;
    List<Target> others = control;
    for (MessageType type : TYPES) {
      if (type == MessageType.UNRECOGNIZED
          || !type.name().endsWith("_REQUEST")
          || io.faro.common.network.MessageCodecs.descriptor(type) == null) {
        continue;
      }
      boolean data = type == MessageType.PUSH_REQUEST;
      Target target = data ? push : others.get(sent % others.size());
      int size = (data ? dataPortSize : controlPortSize) - 64;
      sendRepeated(target, type, size);
      sent++;
    }
    for (int i = 0; i < 3; i++) {
      sendRepeated(push, MessageType.PUSH_REQUEST, 120 << 20);
      sent++;
    }
    return sent;
  }

  /** One frame of {@code type} whose meta is {@code size} bytes of empty repeated entries. */
  private void sendRepeated(Target target, MessageType type, int size) {
    com.google.protobuf.Descriptors.Descriptor d =
        io.faro.common.network.MessageCodecs.descriptor(type);
    int field = 15;
    for (com.google.protobuf.Descriptors.FieldDescriptor f : d.getFields()) {
      if (f.isRepeated()
          && (f.getJavaType() == com.google.protobuf.Descriptors.FieldDescriptor.JavaType.MESSAGE
              || f.getJavaType() == com.google.protobuf.Descriptors.FieldDescriptor.JavaType.STRING
              || f.getJavaType()
                  == com.google.protobuf.Descriptors.FieldDescriptor.JavaType.BYTE_STRING)
          && f.getNumber() < 16) {
        field = f.getNumber();
        break;
      }
    }
    byte[] entries = new byte[1 << 20];
    for (int i = 0; i + 1 < entries.length; i += 2) {
      entries[i] = (byte) ((field << 3) | 2); // length-delimited, length 0
    }
    int meta = size - size % 2;
    Connection c = new Connection(target);
    if (!c.open()) {
      return;
    }
    c.write(
        ByteBuffer.allocate(19)
            .putInt(15 + meta)
            .put((byte) KIND_REQUEST)
            .putShort((short) type.getNumber())
            .putLong(nextRequestId++)
            .putInt(meta)
            .array());
    for (int left = meta; left > 0 && c.isOpen(); left -= entries.length) {
      c.write(left >= entries.length ? entries : java.util.Arrays.copyOf(entries, left));
    }
    c.flush();
    c.close();
  }

  /**
   * Opens {@code count} connections to {@code target} from {@code local} (another loopback address,
   * as another host: the server bounds connections per peer address), each sending the header of a
   * {@code frameSize} push frame and its first MiB, and holds them open until {@link Held#close}:
   * what one peer can make a server hold in half-received frames.
   */
  Held halfSent(Target target, java.net.InetAddress local, int count, int frameSize) {
    List<Connection> open = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      Connection c = new Connection(target, local);
      if (!c.open()) {
        continue;
      }
      c.write(
          ByteBuffer.allocate(19)
              .putInt(frameSize - 4)
              .put((byte) KIND_REQUEST)
              .putShort((short) MessageType.RESERVE_SLOTS_REQUEST_VALUE)
              .putLong(1)
              .putInt(frameSize - 64)
              .array());
      c.write(new byte[1 << 20]);
      c.flush();
      open.add(c);
    }
    return new Held(open);
  }

  /** Connections held open by {@link #halfSent}. */
  final class Held implements AutoCloseable {
    private final List<Connection> connections;

    private Held(List<Connection> connections) {
      this.connections = connections;
    }

    /** How many the server has not closed yet. */
    int open() {
      return (int) connections.stream().filter(c -> c.isOpen() && !c.closedByPeer()).count();
    }

    @Override
    public void close() {
      connections.forEach(Connection::close);
    }
  }

  /** Sends one fuzzed frame (or a fragment of one, then closes); false if the write failed. */
  private boolean sendOne(Connection c) {
    int dice = random.nextInt(1000);
    MessageType type = TYPES[random.nextInt(TYPES.length)];
    if (type == MessageType.UNRECOGNIZED) {
      type = MessageType.MESSAGE_TYPE_UNSPECIFIED;
    }
    if (dice < 700) {
      return c.write(frame(type.getNumber(), request(type), body(type)));
    }
    if (dice < 880) {
      byte[] frame = frame(type.getNumber(), request(type), body(type));
      // Flip bytes after the length field: the frame still arrives whole.
      for (int flips = 1 + random.nextInt(3); flips > 0 && frame.length > 4; flips--) {
        frame[4 + random.nextInt(frame.length - 4)] ^= (byte) (1 + random.nextInt(255));
      }
      return c.write(frame);
    }
    if (dice < 940) {
      ByteBuffer header = ByteBuffer.allocate(19 + 8);
      int choice = random.nextInt(3);
      header.putInt(15 + 8);
      header.put((byte) (choice == 0 ? 7 : KIND_REQUEST)); // unknown kind
      header.putShort((short) (choice == 1 ? 9999 : type.getNumber())); // unknown type
      header.putLong(nextRequestId++);
      header.putInt(choice == 2 ? 1 << 20 : 8); // meta longer than the frame
      header.putLong(random.nextLong());
      return c.write(header.array());
    }
    if (dice < 970) {
      // A frame cut short, then the connection goes away.
      byte[] frame = frame(type.getNumber(), request(type), body(type));
      boolean ok = c.write(java.util.Arrays.copyOf(frame, random.nextInt(frame.length)));
      c.close();
      return ok;
    }
    if (dice < 985) {
      // A length far beyond the maximum, or below the header.
      int length =
          random.nextBoolean() ? Integer.MAX_VALUE - random.nextInt(1000) : random.nextInt(15);
      return c.write(
          ByteBuffer.allocate(4 + 16).putInt(length).putLong(random.nextLong()).putLong(0).array());
    }
    // Plain garbage.
    byte[] garbage = new byte[1 + random.nextInt(512)];
    random.nextBytes(garbage);
    return c.write(garbage);
  }

  private byte[] frame(int type, Message meta, byte[] body) {
    byte[] m = meta.toByteArray();
    ByteBuffer b = ByteBuffer.allocate(4 + 15 + m.length + body.length);
    b.putInt(15 + m.length + body.length)
        .put((byte) KIND_REQUEST)
        .putShort((short) type)
        .putLong(nextRequestId++)
        .putInt(m.length)
        .put(m)
        .put(body);
    return b.array();
  }

  // ------------------------------------------------------------------ adversarial requests

  private String appId() {
    int dice = random.nextInt(100);
    if (dice < 3) {
      return "x".repeat(20_000);
    }
    if (dice < 6) {
      return "fuzz-app\n2026-11-24 00:00:00.000 ERROR forged line " + random.nextInt(10);
    }
    if (dice < 8) {
      return "";
    }
    return "fuzz-app-" + random.nextInt(50_000);
  }

  private String workerId() {
    int dice = random.nextInt(100);
    if (dice < 3) {
      return "w".repeat(5_000);
    }
    if (dice < 6) {
      return "fuzz-worker\n";
    }
    return "fuzz-worker-" + random.nextInt(1_000);
  }

  private ShuffleKeyP fuzzShuffle() {
    return ShuffleKeyP.newBuilder().setAppId(appId()).setShuffleId(random.nextInt(10) - 1).build();
  }

  /** A real running shuffle when one is known (only for reads and commits), else a made-up one. */
  private ShuffleKeyP someShuffle() {
    // A snapshot: another thread may change the list between the size and the read.
    List<ShuffleKeyP> real = List.copyOf(realShuffles);
    if (!real.isEmpty() && random.nextBoolean()) {
      return real.get(random.nextInt(real.size()));
    }
    return fuzzShuffle();
  }

  private int count() {
    int dice = random.nextInt(100);
    return dice < 2
        ? Integer.MAX_VALUE
        : dice < 4 ? -random.nextInt(1000) : dice < 6 ? 0 : random.nextInt(2000);
  }

  private Message request(MessageType type) {
    return switch (type) {
      case REGISTER_WORKER_REQUEST -> {
        // Never a well-formed impostor: that one needs the security issue's secret.
        RegisterWorkerRequest.Builder b = RegisterWorkerRequest.newBuilder();
        switch (random.nextInt(4)) {
          case 0 -> b.setWorkerId("");
          case 1 -> b.setWorkerId("w".repeat(5_000));
          case 2 -> b.setWorkerId("fuzz-worker-" + random.nextInt(100)); // no endpoint
          default -> {
            b.setWorkerId("fuzz-worker-" + random.nextInt(100))
                .setEndpoint(
                    WorkerEndpointP.newBuilder()
                        .setHost("127.0.0.1")
                        .setRpcPort(1)
                        .setPushPort(1)
                        .setFetchPort(1));
            for (int i = 0; i < 2_000; i++) {
              b.addDisks(DiskSpecP.newBuilder().setIndex(i).setPath("/d").setTier(DiskTierP.SSD));
            }
          }
        }
        yield b.build();
      }
      case WORKER_HEARTBEAT_REQUEST -> {
        WorkerHeartbeatRequest.Builder b =
            WorkerHeartbeatRequest.newBuilder().setWorkerId(workerId());
        int disks = random.nextInt(20) == 0 ? 2_000 : random.nextInt(3);
        for (int i = 0; i < disks; i++) {
          b.addDisks(DiskLoadP.newBuilder().setIndex(i).setUsableBytes(random.nextLong()));
        }
        for (int i = random.nextInt(4); i > 0; i--) {
          b.addShuffles(fuzzShuffle());
        }
        yield b.build();
      }
      case REGISTER_APP_REQUEST ->
          RegisterAppRequest.newBuilder()
              .setAppId(appId())
              .setProfile(
                  io.faro.proto.AppProfileP.newBuilder()
                      .setUser(random.nextInt(10) == 0 ? "u".repeat(2_000) : "fuzz")
                      .setName("fuzz\n" + random.nextInt()))
              .build();
      case APP_HEARTBEAT_REQUEST -> AppHeartbeatRequest.newBuilder().setAppId(appId()).build();
      case UNREGISTER_APP_REQUEST -> UnregisterAppRequest.newBuilder().setAppId(appId()).build();
      case REQUEST_SLOTS_REQUEST -> {
        RequestSlotsRequest.Builder b =
            RequestSlotsRequest.newBuilder()
                .setShuffle(fuzzShuffle())
                .setNumPartitions(count())
                .setEpoch(random.nextInt(3))
                .setReplicate(random.nextBoolean())
                .setRequestId(
                    random.nextInt(10) == 0 ? "r".repeat(1_000) : "req-" + random.nextInt());
        for (int i = random.nextInt(8); i > 0; i--) {
          b.addPartitionIds(random.nextInt(100) - 5);
        }
        yield b.build();
      }
      case UNREGISTER_SHUFFLE_REQUEST ->
          UnregisterShuffleRequest.newBuilder().setShuffle(fuzzShuffle()).build();
      case CLUSTER_STATUS_REQUEST ->
          ClusterStatusRequest.newBuilder()
              .setPageSize(random.nextInt(20_000) - 10)
              .setAppsAfter(random.nextBoolean() ? "" : appId())
              .build();
      case MASTER_STATUS_REQUEST -> MasterStatusRequest.getDefaultInstance();
      case TRANSFER_LEADER_REQUEST ->
          TransferLeaderRequest.newBuilder()
              .setTo(random.nextBoolean() ? "" : "fuzz-m" + random.nextInt(5))
              .build();
      // Rules that refuse only fuzz users (the suite's own apps register after), or text that
      // does not parse, or too much of it.
      case SET_ADMISSION_RULES_REQUEST ->
          io.faro.proto.SetAdmissionRulesRequest.newBuilder()
              .setRules(
                  switch (random.nextInt(3)) {
                    case 0 -> "deny user=fuzz-" + random.nextInt() + "\n";
                    case 1 -> "allow everything\n" + "#".repeat(random.nextInt(100));
                    default -> "deny user=fuzz\n".repeat(random.nextInt(20_000));
                  })
              .build();
      case ADMISSION_RULES_REQUEST -> io.faro.proto.AdmissionRulesRequest.getDefaultInstance();
      case SET_WORKER_ADMISSION_REQUEST ->
          SetWorkerAdmissionRequest.newBuilder()
              .setWorkerId(workerId())
              .setReasonBytes(com.google.protobuf.ByteString.copyFromUtf8("fuzz\nforged"))
              .build();
      case RESERVE_SLOTS_REQUEST -> {
        // Reservations for made-up apps (the master expires them at the next heartbeat), now and
        // then more locations than a worker takes in one request.
        ReserveSlotsRequest.Builder b =
            ReserveSlotsRequest.newBuilder()
                .setShuffle(fuzzShuffle())
                .setOwnerToken(random.nextLong());
        int n = random.nextInt(5_000) == 0 ? 150_000 : random.nextInt(50);
        for (int i = 0; i < n; i++) {
          b.addLocations(
              PartitionLocationP.newBuilder()
                  .setPartitionId(random.nextInt(1_000) - 2)
                  .setEpoch(random.nextInt(3))
                  .setRole(RoleP.PRIMARY)
                  .setDiskIndex(random.nextInt(4) - 1));
        }
        yield b.build();
      }
      case COMMIT_FILES_REQUEST ->
          CommitFilesRequest.newBuilder()
              .setShuffle(someShuffle())
              .setOwnerToken(random.nextBoolean() ? 0 : random.nextLong())
              .build();
      case PUSH_REQUEST -> {
        PushRequest.Builder b =
            PushRequest.newBuilder()
                .setShuffle(fuzzShuffle())
                .setReplica(random.nextInt(10) == 0)
                .setChunkSize(random.nextInt(10) == 0 ? random.nextLong() : 0);
        b.addParts(
            PushPart.newBuilder()
                .setPartitionId(random.nextInt(100))
                .setEpoch(random.nextInt(2))
                .setLength(validBatch.length + random.nextInt(3) - 1));
        yield b.build();
      }
      case OPEN_STREAM_REQUEST ->
          OpenStreamRequest.newBuilder()
              .setShuffle(someShuffle())
              .setPartitionId(random.nextInt(100) - 2)
              .setEpoch(random.nextInt(3))
              .build();
      case FETCH_CHUNK_REQUEST ->
          FetchChunkRequest.newBuilder()
              .setShuffle(someShuffle())
              .setPartitionId(random.nextInt(100) - 2)
              .setEpoch(random.nextInt(3))
              .setChunkIndex(random.nextInt(10) - 2)
              .build();
      case WORKER_STATUS_REQUEST -> WorkerStatusRequest.getDefaultInstance();
      // Never the worker's own id: stopping a worker is an operator's (admin tokens: the security
      // issue's); another id must be refused, the worker kept.
      case STOP_WORKER_REQUEST ->
          io.faro.proto.StopWorkerRequest.newBuilder()
              .setWorkerId(workerId())
              .setGraceful(random.nextBoolean())
              .build();
      // Handshakes with made-up identities, nonces and proofs, in any order.
      case AUTH_START_REQUEST ->
          io.faro.proto.AuthStartRequest.newBuilder()
              .setIdentity(
                  random.nextBoolean() ? "cluster" : random.nextBoolean() ? "admin" : workerId())
              .setClientNonce(com.google.protobuf.ByteString.copyFrom(new byte[random.nextInt(40)]))
              .build();
      case AUTH_FINISH_REQUEST ->
          io.faro.proto.AuthFinishRequest.newBuilder()
              .setClientProof(com.google.protobuf.ByteString.copyFrom(new byte[random.nextInt(40)]))
              .build();
      // Response types and others no peer sends as a request: a harmless message under that type.
      default -> MasterStatusRequest.getDefaultInstance();
    };
  }

  private byte[] body(MessageType type) {
    if (type != MessageType.PUSH_REQUEST) {
      return new byte[0];
    }
    byte[] body = validBatch.clone();
    if (random.nextBoolean()) {
      body[random.nextInt(body.length)] ^= 0x5a;
    }
    return body;
  }

  /** A socket whose answers a daemon thread reads and drops, so the server never blocks writing. */
  private final class Connection {
    private final Target target;
    private final java.net.InetAddress local;
    private Socket socket;
    private OutputStream out;
    private volatile boolean closedByPeer;

    Connection(Target target) {
      this(target, null);
    }

    /** A connection from {@code local} (null: any address). */
    Connection(Target target, java.net.InetAddress local) {
      this.target = target;
      this.local = local;
    }

    boolean closedByPeer() {
      return closedByPeer;
    }

    boolean isOpen() {
      return socket != null && !socket.isClosed();
    }

    boolean open() {
      try {
        socket = new Socket();
        if (local != null) {
          socket.bind(new InetSocketAddress(local, 0));
        }
        socket.connect(target.address(), 2_000);
        socket.setTcpNoDelay(true);
        out = new java.io.BufferedOutputStream(socket.getOutputStream(), 64 * 1024);
        Socket mine = socket;
        Thread drain = new Thread(() -> drain(mine), "fuzz-drain-" + target.name());
        drain.setDaemon(true);
        drain.start();
        return true;
      } catch (IOException e) {
        close();
        return false;
      }
    }

    private void drain(Socket s) {
      byte[] sink = new byte[64 * 1024];
      try (InputStream in = s.getInputStream()) {
        while (in.read(sink) >= 0) {
          // dropped: the fuzzer does not read answers
        }
        closedByPeer = true;
      } catch (IOException e) {
        // closed by either side
        closedByPeer = true;
      }
    }

    boolean write(byte[] data) {
      try {
        out.write(data);
        bytes.addAndGet(data.length);
        return true;
      } catch (IOException e) {
        close();
        return false;
      }
    }

    void flush() {
      if (isOpen()) {
        try {
          out.flush();
        } catch (IOException e) {
          close();
        }
      }
    }

    void close() {
      if (socket != null) {
        try {
          socket.close();
        } catch (IOException e) {
          // already gone
        }
      }
    }
  }
}
