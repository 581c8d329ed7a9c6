package io.faro.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.config.ConfigException;
import io.faro.common.config.FaroConf;
import io.faro.common.config.KnownKeys;
import io.faro.common.id.AppId;
import io.faro.common.id.DiskTier;
import io.faro.common.id.ShuffleId;
import io.faro.common.json.Json;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Frame;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkSettings;
import io.faro.common.network.TransportClient;
import io.faro.common.testing.Eventually;
import io.faro.proto.OpenStreamRequest;
import io.faro.proto.PushPart;
import io.faro.proto.PushRequest;
import io.faro.worker.extension.WorkerExtension;
import io.faro.worker.extension.WorkerExtensions;
import io.faro.worker.server.WorkerServer;
import io.faro.worker.storage.DiskDir;
import io.faro.worker.testing.Batches;
import io.faro.worker.testing.FakeMaster;
import io.faro.worker.testing.TestWorkers;
import io.faro.worker.testing.WorkerClient;
import io.faro.worker.testing.WorkerClient.Part;
import io.netty.buffer.Unpooled;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The faro-testing module as a worker finds it: through its service files, on this module's class
 * path; then what it does to a real worker on loopback (with a fake master): connections dropped, a
 * disk slowed down, and nothing of either while its keys are at their defaults.
 */
class FaultInjectionTest {
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("app-faults"), 1);
  private static final long MIB = 1 << 20;
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  @TempDir Path tmp;
  private FakeMaster master;
  private WorkerServer worker;
  private ClientPool pool;

  @BeforeEach
  void setUp() {
    master = new FakeMaster();
    NetworkSettings network = NetworkSettings.from(FaroConf.empty());
    pool =
        new ClientPool(
            "faults-test", new NetworkSettings(1, network.connectTimeout(), TIMEOUT, 8 << 20));
  }

  @AfterEach
  void tearDown() {
    pool.close();
    if (worker != null) {
      worker.close();
    }
    master.close();
  }

  @Test
  void aWorkerLoadsItAndStrictConfigKnowsItsKeys() {
    WorkerExtensions loaded =
        WorkerExtensions.load(FaroConf.of(Map.of(TestingOptions.DROP_PER_MILLE.key(), "5")));

    assertThat(loaded.all()).hasSize(1).first().isInstanceOf(FaultInjection.class);
    assertThat(loaded.warning())
        .hasValueSatisfying(
            w ->
                assertThat(w)
                    .contains(FaultInjection.class.getName())
                    .contains("faro.testing.drop.connections.per.mille=5")
                    .contains("faro.testing.slow.disk.delay.per.mib=0ms"));

    KnownKeys known = KnownKeys.loaded();
    assertThat(known.keys())
        .contains(
            "faro.testing.drop.connections.per.mille", "faro.testing.slow.disk.delay.per.mib");
    assertThat(known.accepts("faro.testing.drop.connection.per.mille"))
        .as("a typo, with the module loaded")
        .isFalse();
    assertThat(known.closest("faro.testing.drop.connection.per.mille"))
        .contains("faro.testing.drop.connections.per.mille");
  }

  @Test
  void aWorkerRefusesADropRateOutOfRangeNamingTheKey() {
    FaroConf conf =
        TestWorkers.conf(master.endpoint(), tmp.resolve("d0"))
            .with(TestingOptions.DROP_PER_MILLE.key(), "1001");

    assertThatThrownBy(() -> new WorkerServer(conf))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("faro.testing.drop.connections.per.mille");
  }

  @Test
  void atAThousandPerMilleEveryPushAndFetchClosesItsConnection() throws Exception {
    worker =
        new WorkerServer(
            TestWorkers.conf(master.endpoint(), tmp.resolve("d0"))
                .with(TestingOptions.DROP_PER_MILLE, "1000"));
    worker.start();
    try (WorkerClient control = new WorkerClient("control", worker.endpoint())) {
      control.reserve(SHUFFLE, 0, 0, 0); // the control port is left alone
    }
    Batches batches = new Batches(false, 3);

    for (int i = 0; i < 5; i++) {
      TransportClient push = connect(worker.endpoint().push());
      answerOrFailure(push(push, batches.batchBytes(0, 0, i, 1000)));
      Eventually.await("push connection " + i + " closed", () -> !push.isActive());

      TransportClient fetch = connect(worker.endpoint().fetch());
      answerOrFailure(
          fetch.send(
              OpenStreamRequest.newBuilder()
                  .setShuffle(WorkerClient.key(SHUFFLE))
                  .setPartitionId(0)
                  .build(),
              null,
              TIMEOUT));
      Eventually.await("fetch connection " + i + " closed", () -> !fetch.isActive());
    }
  }

  @Test
  void atTheDefaultsNothingIsDroppedOrSlowed() throws Exception {
    Path disk = Files.createDirectories(tmp.resolve("d0"));
    Files.createFile(disk.resolve(FaultInjection.SLOW_DISK_FILE)); // no delay: the file is moot
    worker = new WorkerServer(TestWorkers.conf(master.endpoint(), disk));
    worker.start();
    try (WorkerClient control = new WorkerClient("control", worker.endpoint())) {
      control.reserve(SHUFFLE, 0, 0, 0);
    }
    Batches batches = new Batches(false, 3);
    TransportClient push = connect(worker.endpoint().push());

    for (int i = 0; i < 5; i++) {
      Frame answer =
          Futures.await(push(push, batches.batchBytes(0, 0, i, 1000)), TIMEOUT, "push " + i);
      answer.release();
      assertThat(push.isActive()).as("the push connection after push " + i).isTrue();
    }
    assertThat(new FaultInjection().diskWriteDelayPerMiB(new DiskDir(disk, DiskTier.SSD)))
        .as("an extension never configured")
        .isZero();
  }

  @Test
  void aDiskHoldingTheMarkerWritesSlowerThanItsPeer() throws Exception {
    Path slow = Files.createDirectories(tmp.resolve("d0"));
    Path other = tmp.resolve("d1");
    // There from the start: the first disk check, before the worker registers, finds it.
    Files.createFile(slow.resolve(FaultInjection.SLOW_DISK_FILE));
    worker =
        new WorkerServer(
            TestWorkers.conf(master.endpoint(), slow, other)
                .with(TestingOptions.SLOW_DISK_DELAY, "300ms")
                .with("faro.worker.tier.hdd.layout", "files")
                .with("faro.worker.flush.buffer.size", "64k"));
    worker.start();
    try (WorkerClient client = new WorkerClient("writer", worker.endpoint())) {
      client.reserve(SHUFFLE, 0, 0, 0);
      client.reserve(SHUFFLE, 0, 1, 1);
      Batches batches = new Batches(false, 5);
      for (int i = 0; i < 16; i++) {
        client.push(
            SHUFFLE,
            List.of(
                new Part(0, 0, batches.batchBytes(0, 0, 2 * i, 64 << 10)),
                new Part(1, 0, batches.batchBytes(0, 0, 2 * i + 1, 64 << 10))));
      }
      client.commit(SHUFFLE);
    }

    String disks = get(worker.httpPort(), "/api/v1/disks");
    List<Long> written = Json.numbers(disks, "written_bytes");
    List<Long> writeMs = Json.numbers(disks, "write_ms");
    assertThat(written.get(0)).as("bytes written to the slowed disk").isGreaterThanOrEqualTo(MIB);
    assertThat(written.get(1)).as("bytes written to its peer").isGreaterThanOrEqualTo(MIB);
    assertThat(writeMs.get(0))
        .as("write time of the slowed disk, %s bytes at 300 ms per MiB", written.get(0))
        .isGreaterThanOrEqualTo(written.get(0) * 300 / MIB);
    assertThat(writeMs.get(1)).as("write time of its peer").isLessThan(writeMs.get(0));
  }

  @Test
  void theMarkerIsLookedForAtEachAskAndOnlyWithADelay() throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("d0"));
    DiskDir disk = new DiskDir(dir, DiskTier.SSD);
    WorkerExtension slowing = new FaultInjection();
    slowing.configure(FaroConf.empty().with(TestingOptions.SLOW_DISK_DELAY, "40ms"));
    WorkerExtension idle = new FaultInjection();
    idle.configure(FaroConf.empty());

    assertThat(slowing.diskWriteDelayPerMiB(disk)).as("no marker yet").isZero();
    Files.createFile(dir.resolve(FaultInjection.SLOW_DISK_FILE));
    assertThat(slowing.diskWriteDelayPerMiB(disk)).isEqualTo(Duration.ofMillis(40));
    assertThat(idle.diskWriteDelayPerMiB(disk)).as("no delay configured").isZero();
    Files.delete(dir.resolve(FaultInjection.SLOW_DISK_FILE));
    assertThat(slowing.diskWriteDelayPerMiB(disk)).as("recovered").isZero();
  }

  /** Pushes {@code batch} to partition 0 of {@link #SHUFFLE} over {@code connection}. */
  private static CompletableFuture<Frame> push(TransportClient connection, byte[] batch) {
    return connection.send(
        PushRequest.newBuilder()
            .setShuffle(WorkerClient.key(SHUFFLE))
            .addParts(PushPart.newBuilder().setPartitionId(0).setLength(batch.length))
            .build(),
        Unpooled.wrappedBuffer(batch),
        TIMEOUT);
  }

  private TransportClient connect(HostPort address) {
    return Futures.await(pool.client(address), TIMEOUT, "connect to " + address);
  }

  /** Waits for the answer (released) or the failure of {@code call}: either may come. */
  private static void answerOrFailure(CompletableFuture<Frame> call) {
    call.handle(
            (frame, error) -> {
              if (frame != null) {
                frame.release();
              }
              return null;
            })
        .join();
  }

  private static String get(int port, String path) throws Exception {
    HttpResponse<String> response =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                    .timeout(TIMEOUT)
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as("GET " + path).isEqualTo(200);
    return response.body();
  }
}
