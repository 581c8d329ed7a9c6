package io.faro.worker.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.DiskTier;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Partition files written and read with direct I/O: the same bytes as through the page cache,
 * whatever the sizes of the writes, and reads of any range within a bounded pool of buffers.
 */
class DirectIoTest {
  private static final PartitionKey KEY =
      new PartitionKey(new ShuffleId(new AppId("app-d"), 1), 5, 0);

  /** Set to true to skip, rather than fail, where the temporary directory cannot do O_DIRECT. */
  private static final String SKIP_PROPERTY = "faro.test.skip.direct.io";

  @TempDir Path root;
  private DirectIo io;

  @BeforeEach
  void probe() {
    DirectIo.Probe probe = DirectIo.probe(root);
    if (!probe.supported()) {
      // ext4, xfs (and tmpfs since Linux 6.6) take O_DIRECT: CI must run these tests, not skip
      // them.
      assumeThat(Boolean.getBoolean(SKIP_PROPERTY)).as("-D%s=true", SKIP_PROPERTY).isTrue();
    }
    assertThat(probe.supported())
        .as("O_DIRECT in %s: %s", root, probe.unsupportedReason())
        .isTrue();
    io = probe.io();
  }

  @Test
  void theProbeFindsTheFileSystemsAlignmentAndLeavesNothingBehind() throws IOException {
    assertThat(io.alignment()).isGreaterThanOrEqualTo(512);
    assertThat(Integer.bitCount(io.alignment())).isEqualTo(1);
    try (var files = Files.list(root)) {
      assertThat(files).isEmpty();
    }
    assertThat(io.alignDown(io.alignment() + 1)).isEqualTo(io.alignment());
    assertThat(io.alignUp(io.alignment() + 1)).isEqualTo(2L * io.alignment());
    assertThat(io.alignUp(0)).isZero();
  }

  @Test
  void directAndBufferedWritesOfAnySizesGiveTheSameFile() throws IOException {
    Random random = new Random(42);
    int align = io.alignment();
    // Sizes around the alignment and the staging buffer, tiny writes that only grow the tail,
    // composites, and heap buffers.
    int[] sizes = {
      1,
      7,
      align - 8,
      align,
      align + 1,
      3 * align,
      DirectIo.STAGING_BYTES - 5,
      DirectIo.STAGING_BYTES,
      DirectIo.STAGING_BYTES + align + 3,
      2 * DirectIo.STAGING_BYTES + 17,
      100,
      2,
      5000
    };
    PartitionFile direct = new PartitionFile(KEY, root.resolve("direct/p.data"), io);
    PartitionFile buffered = new PartitionFile(KEY, root.resolve("buffered/p.data"));
    List<Long> offsets = new ArrayList<>(List.of(0L));
    long total = 0;
    for (int i = 0; i < sizes.length; i++) {
      byte[] data = new byte[sizes[i]];
      random.nextBytes(data);
      writeBoth(direct, buffered, data, i % 4);
      total += data.length;
      if (i % 4 == 3) {
        offsets.add(total);
      }
    }
    if (offsets.get(offsets.size() - 1) != total) {
      offsets.add(total);
    }
    ChunkIndex chunks = ChunkIndex.of(offsets.stream().mapToLong(Long::longValue).toArray());

    assertThat(direct.finish(chunks, true)).contains(chunks);
    assertThat(buffered.finish(chunks, true)).contains(chunks);

    byte[] directBytes = Files.readAllBytes(direct.path());
    assertThat(directBytes)
        .hasSize(
            (int)
                (total
                    + PartitionFileFormat.indexLength(
                        chunks.chunkCount(),
                        chunks.hasMapRanges()
                            ? PartitionFileFormat.VERSION
                            : PartitionFileFormat.VERSION_WITHOUT_MAP_RANGES)
                    + PartitionFileFormat.TRAILER_SIZE));
    assertThat(Arrays.equals(directBytes, Files.readAllBytes(buffered.path())))
        .as("the direct file has the buffered file's bytes")
        .isTrue();
    assertThat(PartitionFileReader.readIndex(direct.path())).isEqualTo(chunks);
  }

  @Test
  void aFileOfLessThanOneBlockIsWrittenWholeAtFinish() throws IOException {
    PartitionFile file = new PartitionFile(KEY, root.resolve("small/p.data"), io);
    byte[] data = "tiny".getBytes();
    write(file, Unpooled.wrappedBuffer(data));
    write(file, Unpooled.wrappedBuffer(data));

    assertThat(file.finish(ChunkIndex.of(0, 8), true)).contains(ChunkIndex.of(0, 8));
    assertThat(Arrays.copyOf(Files.readAllBytes(file.path()), 8)).isEqualTo("tinytiny".getBytes());
  }

  @Test
  void theReaderReadsAnyRangeOfTheFile() throws Exception {
    byte[] data = new byte[3 * DiskReader.SEGMENT_BYTES + 12345];
    new Random(7).nextBytes(data);
    Path file = root.resolve("read.data");
    Files.write(file, data);
    try (DiskReader reader =
        new DiskReader("test-reader", io, 2, 8L * DiskReader.SEGMENT_BYTES, 1000)) {
      long[][] ranges = {
        {0, 1},
        {0, data.length},
        {1, io.alignment()},
        {io.alignment() - 1, 2},
        {DiskReader.SEGMENT_BYTES - 3, DiskReader.SEGMENT_BYTES + 6},
        {data.length - 10, 10},
        {12345, 2 * DiskReader.SEGMENT_BYTES}
      };
      for (long[] range : ranges) {
        ByteBuf bytes =
            reader.read(file, range[0], (int) range[1], () -> true).get(10, TimeUnit.SECONDS);
        try {
          assertThat(ByteBufUtil.getBytes(bytes))
              .as("bytes [%d, +%d)", range[0], range[1])
              .isEqualTo(Arrays.copyOfRange(data, (int) range[0], (int) (range[0] + range[1])));
        } finally {
          bytes.release();
        }
      }
      assertThat(reader.segmentsInUse()).isZero();
      // Read-ahead fills the page cache, which a disk with direct I/O never reads from.
      assertThat(reader.readsThroughPageCache()).isFalse();
      assertThat(reader.warm(file, data.length)).isCompletedWithValue(false);
      assertThat(reader.warmedBytes() + reader.warmResidentBytes()).isZero();
    }
  }

  @Test
  void aReadToTheEndOfAFileOfWholeBlocksStopsAtItsEnd() throws Exception {
    byte[] data = new byte[2 * DiskReader.SEGMENT_BYTES];
    new Random(8).nextBytes(data);
    Path file = root.resolve("whole.data");
    Files.write(file, data);
    try (DiskReader reader =
        new DiskReader("test-reader", io, 1, 4L * DiskReader.SEGMENT_BYTES, 1000)) {
      ByteBuf tail = reader.read(file, data.length - 10, 10, () -> true).get(10, TimeUnit.SECONDS);
      try {
        assertThat(ByteBufUtil.getBytes(tail))
            .isEqualTo(Arrays.copyOfRange(data, data.length - 10, data.length));
      } finally {
        tail.release();
      }
      assertThat(reader.segmentsInUse()).isZero();
    }
  }

  @Test
  void concurrentReadsThatEachNeedMostOfThePoolAllComplete() throws Exception {
    byte[] data = new byte[4 * DiskReader.SEGMENT_BYTES];
    new Random(9).nextBytes(data);
    Path file = root.resolve("busy.data");
    Files.write(file, data);
    // 4 threads, 4 segments, reads of 3 segments each: taking segments one by one, each thread
    // would grab one and wait for the rest forever (until the timeout); reserving them at once,
    // the reads take turns.
    try (DiskReader reader =
        new DiskReader("test-reader", io, 4, 4L * DiskReader.SEGMENT_BYTES, 10_000)) {
      int length = 3 * DiskReader.SEGMENT_BYTES - 2 * io.alignment();
      List<java.util.concurrent.CompletableFuture<Void>> reads = new ArrayList<>();
      for (int i = 0; i < 12; i++) {
        long offset = io.alignment() + (long) (i % 3) * 1000;
        reads.add(
            reader
                .read(file, offset, length - 1000, () -> true)
                .thenAccept(
                    bytes -> {
                      try {
                        assertThat(ByteBufUtil.getBytes(bytes))
                            .isEqualTo(
                                Arrays.copyOfRange(
                                    data, (int) offset, (int) offset + length - 1000));
                      } finally {
                        bytes.release();
                      }
                    }));
      }
      for (var read : reads) {
        read.get(20, TimeUnit.SECONDS);
      }
      assertThat(reader.segmentsInUse()).isZero();
    }
  }

  @Test
  void theReaderCountsTheWholeBlocksItReads() throws Exception {
    byte[] data = new byte[3 * io.alignment()];
    new Random(10).nextBytes(data);
    Path file = root.resolve("counted.data");
    Files.write(file, data);
    try (DiskReader reader =
        new DiskReader("test-reader", io, 1, 2L * DiskReader.SEGMENT_BYTES, 1000)) {
      // One byte past the first block, to one byte into the third: three blocks come off the disk.
      ByteBuf bytes =
          reader
              .read(file, io.alignment() - 1, io.alignment() + 2, () -> true)
              .get(10, TimeUnit.SECONDS);
      bytes.release();

      assertThat(reader.readBytes()).isEqualTo(3L * io.alignment());
      assertThat(reader.readNanos()).isPositive();
    }
  }

  @Test
  void aReadNoLongerWantedIsSkipped() throws Exception {
    Path file = root.resolve("unwanted.data");
    Files.write(file, new byte[100]);
    try (DiskReader reader =
        new DiskReader("test-reader", io, 1, 2L * DiskReader.SEGMENT_BYTES, 1000)) {
      assertThatThrownBy(() -> reader.read(file, 0, 100, () -> false).join())
          .cause()
          .isInstanceOfSatisfying(
              FaroException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.CONNECTION_FAILED));
      assertThat(reader.segmentsInUse()).isZero();
    }
  }

  @Test
  void readsWaitForBuffersAndFailRetryablyWhenNoneComeBack() throws Exception {
    byte[] data = new byte[4 * DiskReader.SEGMENT_BYTES];
    Path file = root.resolve("pool.data");
    Files.write(file, data);
    try (DiskReader reader =
        new DiskReader("test-reader", io, 1, 3L * DiskReader.SEGMENT_BYTES, 200)) {
      int length = 2 * DiskReader.SEGMENT_BYTES - 2 * io.alignment();
      ByteBuf held =
          reader.read(file, io.alignment(), length, () -> true).get(10, TimeUnit.SECONDS);
      assertThat(reader.segmentsInUse()).isEqualTo(2);

      // Needs two segments, one is free: it waits, times out and takes nothing.
      assertThatThrownBy(() -> reader.read(file, 0, length, () -> true).join())
          .isInstanceOf(CompletionException.class)
          .cause()
          .isInstanceOfSatisfying(
              FaroException.class,
              e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.TIMEOUT);
                assertThat(e.code().retryable()).isTrue();
              })
          .hasMessageContaining("faro.worker.io.read.buffer.per.disk");
      assertThat(reader.segmentsInUse()).isEqualTo(2);

      held.release();
      ByteBuf again = reader.read(file, 0, length, () -> true).get(10, TimeUnit.SECONDS);
      assertThat(again.readableBytes()).isEqualTo(length);
      again.release();
      assertThat(reader.segmentsInUse()).isZero();

      assertThat(reader.maxReadBytes())
          .isEqualTo(3L * DiskReader.SEGMENT_BYTES - 2L * io.alignment());
      assertThatThrownBy(() -> reader.read(file, 0, 3 * DiskReader.SEGMENT_BYTES, () -> true))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("at most " + reader.maxReadBytes());
    }
  }

  @Test
  void aMissingOrShortFileFailsTheReadAndNotTheReader() throws Exception {
    Path file = root.resolve("short.data");
    Files.write(file, new byte[100]);
    try (DiskReader reader =
        new DiskReader("test-reader", io, 1, 2L * DiskReader.SEGMENT_BYTES, 1000)) {
      assertThatThrownBy(() -> reader.read(root.resolve("nope"), 0, 10, () -> true).join())
          .cause()
          .isInstanceOf(FaroException.class)
          .hasMessageContaining("cannot open");
      assertThatThrownBy(() -> reader.read(file, 50, 51, () -> true).join())
          .cause()
          .isInstanceOf(FaroException.class)
          .hasMessageContaining("has 100 bytes");
      // The reader goes on serving.
      ByteBuf ok = reader.read(file, 90, 10, () -> true).get(10, TimeUnit.SECONDS);
      assertThat(ok.readableBytes()).isEqualTo(10);
      ok.release();
      assertThat(reader.segmentsInUse()).isZero();
    }
  }

  @Test
  void aDirectoryThatCannotBeProbedIsNotDirect() {
    DirectIo.Probe probe = DirectIo.probe(root.resolve("missing"));
    assertThat(probe.supported()).isFalse();
    assertThat(probe.unsupportedReason()).contains("missing");
  }

  @Test
  void directModeWhereO_DirectIsRefusedStopsTheWorkerWithTheReason() {
    // Every local file system of this kernel takes O_DIRECT (tmpfs too, since Linux 6.6), so the
    // refusal is the probe's answer for a file system that does not, e.g. some FUSE mounts.
    DiskDir dir = new DiskDir(root.resolve("d0"), DiskTier.NVME);
    DirectIo.Probe refused = new DirectIo.Probe(null, "O_DIRECT is refused: Invalid argument");

    assertThatThrownBy(() -> Disks.directIo(dir, IoMode.DIRECT, refused))
        .isInstanceOfSatisfying(
            FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.STORAGE_FAILED))
        .hasMessageContaining(dir.path().toString())
        .hasMessageContaining("faro.worker.io.mode")
        .hasMessageContaining("Invalid argument");
    assertThat(Disks.directIo(dir, IoMode.AUTO, refused)).isNull();
    assertThat(Disks.directIo(dir, IoMode.AUTO, new DirectIo.Probe(io, null))).isSameAs(io);
    assertThat(Disks.directIo(dir, IoMode.BUFFERED, new DirectIo.Probe(io, null))).isNull();
  }

  @Test
  void autoModeUsesDirectIoOnNvmeAndThePageCacheOnSsdAndHdd() {
    DirectIo.Probe works = new DirectIo.Probe(io, null);
    for (DiskTier tier : List.of(DiskTier.SSD, DiskTier.HDD)) {
      DiskDir slower = new DiskDir(root.resolve(tier.name()), tier);
      assertThat(Disks.directIo(slower, IoMode.AUTO, works)).as("%s", tier).isNull();
      assertThat(Disks.directIo(slower, IoMode.DIRECT, works)).as("%s", tier).isSameAs(io);
    }
    List<DiskDir> dirs =
        List.of(
            new DiskDir(root.resolve("d0"), DiskTier.NVME),
            new DiskDir(root.resolve("d1"), DiskTier.SSD));
    try (Disks disks =
        Disks.open(
            dirs,
            new Disks.Options(
                Disks.Options.everyTier(new DiskThreads(1, 1)), IoMode.AUTO, 4 << 20, 1000),
            "test")) {
      assertThat(disks.get(0).ioMode()).isEqualTo(IoMode.DIRECT);
      assertThat(disks.get(0).reader().maxReadBytes()).isEqualTo((4L << 20) - 2L * io.alignment());
      assertThat(disks.get(1).ioMode()).isEqualTo(IoMode.BUFFERED);
    }
    try (Disks disks =
        Disks.open(
            dirs,
            new Disks.Options(
                Disks.Options.everyTier(new DiskThreads(1, 1)), IoMode.BUFFERED, 4 << 20, 1000),
            "test")) {
      assertThat(disks.get(0).ioMode()).isEqualTo(IoMode.BUFFERED);
      // A buffered disk reads through the page cache: no alignment to make room for.
      assertThat(disks.get(0).reader().maxReadBytes()).isEqualTo((4L << 20) - 2);
    }
  }

  /**
   * Writes {@code data} to both files in one call, as one buffer of the given kind (direct, heap,
   * composite), or as three buffers in one list (kind 3, what a flush hands over).
   */
  private static void writeBoth(PartitionFile a, PartitionFile b, byte[] data, int kind) {
    for (PartitionFile file : List.of(a, b)) {
      if (kind == 3) {
        int third = data.length / 3;
        List<ByteBuf> parts =
            List.of(
                Unpooled.wrappedBuffer(data, 0, third),
                PooledByteBufAllocator.DEFAULT
                    .directBuffer(third + 1)
                    .writeBytes(data, third, third),
                Unpooled.wrappedBuffer(data, 2 * third, data.length - 2 * third));
        try {
          file.write(parts);
        } finally {
          parts.forEach(ByteBuf::release);
        }
        continue;
      }
      ByteBuf buffer =
          switch (kind) {
            case 0 -> PooledByteBufAllocator.DEFAULT.directBuffer(data.length).writeBytes(data);
            case 1 -> Unpooled.wrappedBuffer(data.clone());
            default -> {
              CompositeByteBuf composite = PooledByteBufAllocator.DEFAULT.compositeDirectBuffer();
              int half = data.length / 2;
              composite.addComponents(
                  true,
                  PooledByteBufAllocator.DEFAULT
                      .directBuffer(Math.max(1, half))
                      .writeBytes(data, 0, half),
                  PooledByteBufAllocator.DEFAULT
                      .directBuffer(data.length - half)
                      .writeBytes(data, half, data.length - half));
              yield composite;
            }
          };
      write(file, buffer);
    }
  }

  private static void write(PartitionFile file, ByteBuf buffer) {
    try {
      file.write(List.of(buffer));
    } finally {
      buffer.release();
    }
  }
}
