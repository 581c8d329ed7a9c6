package io.faro.worker.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The partition file format, written then read back, and its corruption checks. */
class PartitionFileTest {
  private static final PartitionKey KEY =
      new PartitionKey(new ShuffleId(new AppId("app-1"), 3), 7, 2);

  @TempDir Path root;

  @Test
  void writesSeveralChunksAndReadsTheIndexBack() throws IOException {
    Random random = new Random(11);
    PartitionFile file = new PartitionFile(KEY, FileLayout.partitionFile(root, KEY));
    byte[] data = new byte[1000];
    random.nextBytes(data);
    // Three writes, one of them a composite buffer (several nio buffers, gathered).
    write(file, buffer(data, 0, 100));
    CompositeByteBuf composite = PooledByteBufAllocator.DEFAULT.compositeDirectBuffer();
    composite.addComponents(true, buffer(data, 100, 250), buffer(data, 350, 300));
    write(file, composite);
    write(file, buffer(data, 650, 200), buffer(data, 850, 150));

    ChunkIndex chunks = ChunkIndex.of(0, 100, 650, 1000);
    Optional<ChunkIndex> read = file.finish(chunks, true);

    assertThat(read).contains(chunks);
    Path path = root.resolve("app-1/3/7-2.data");
    assertThat(file.path()).isEqualTo(path);
    assertThat(PartitionFileReader.readIndex(path)).isEqualTo(chunks);
    byte[] onDisk = Files.readAllBytes(path);
    assertThat(onDisk)
        .hasSize(1000 + 4 * PartitionFileFormat.INDEX_ENTRY + PartitionFileFormat.TRAILER_SIZE);
    assertThat(Arrays.copyOf(onDisk, 1000)).isEqualTo(data);
    assertThat(chunks.chunkCount()).isEqualTo(3);
    assertThat(chunks.chunkLength(1)).isEqualTo(550);
  }

  @Test
  void aVersion2FileKeepsEachChunksMapRangeAndAVersion1FileIsStillRead() throws IOException {
    byte[] data = new byte[600];
    new Random(12).nextBytes(data);
    PartitionFile file = new PartitionFile(KEY, FileLayout.partitionFile(root, KEY));
    write(file, buffer(data, 0, 600));
    ChunkIndex chunks = ChunkIndex.of(new long[] {0, 200, 600}, new int[] {0, 3}, new int[] {4, 9});
    assertThat(file.finish(chunks, true)).contains(chunks);
    byte[] onDisk = Files.readAllBytes(file.path());
    assertThat(onDisk)
        .hasSize(
            600
                + 3 * PartitionFileFormat.INDEX_ENTRY
                + 2 * PartitionFileFormat.MAP_RANGE_ENTRY
                + PartitionFileFormat.TRAILER_SIZE);
    ChunkIndex read = PartitionFileReader.readIndex(file.path());
    assertThat(read).isEqualTo(chunks);
    assertThat(read.hasMapRanges()).isTrue();
    assertThat(read.firstMap(1)).isEqualTo(3);
    assertThat(read.lastMap(1)).isEqualTo(9);

    // An index without map ranges is written, and read back, as version 1 (the files of a Faro
    // before chunks knew their maps).
    PartitionKey other = new PartitionKey(KEY.shuffle(), 8, 0);
    PartitionFile old = new PartitionFile(other, FileLayout.partitionFile(root, other));
    write(old, buffer(data, 0, 600));
    old.finish(ChunkIndex.of(0, 200, 600), true);
    ChunkIndex v1 = PartitionFileReader.readIndex(old.path());
    assertThat(v1.hasMapRanges()).isFalse();
    assertThat(v1.asList()).containsExactly(0L, 200L, 600L);
    try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(old.path().toFile(), "r")) {
      f.seek(f.length() - PartitionFileFormat.TRAILER_SIZE + PartitionFileFormat.TRAILER_VERSION);
      assertThat(f.readInt()).isEqualTo(PartitionFileFormat.VERSION_WITHOUT_MAP_RANGES);
    }
  }

  @Test
  void aMapRangeThatEndsBeforeItStartsIsCorrupt() throws IOException {
    byte[] data = new byte[300];
    PartitionFile file = new PartitionFile(KEY, FileLayout.partitionFile(root, KEY));
    write(file, buffer(data, 0, 300));
    file.finish(ChunkIndex.of(new long[] {0, 300}, new int[] {5}, new int[] {6}), true);
    // Chunk 0's last map (the int after the 2 offsets) made smaller than its first; CRC fixed up,
    // so that only the range check can catch it.
    byte[] bytes = Files.readAllBytes(file.path());
    java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(bytes);
    int index = 300;
    b.putInt(index + 2 * PartitionFileFormat.INDEX_ENTRY + 4, 1);
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    crc.update(
        bytes, index, 2 * PartitionFileFormat.INDEX_ENTRY + PartitionFileFormat.MAP_RANGE_ENTRY);
    b.putInt(
        bytes.length - PartitionFileFormat.TRAILER_SIZE + PartitionFileFormat.TRAILER_INDEX_CRC,
        (int) crc.getValue());
    Files.write(file.path(), bytes);
    assertCorrupt(file.path(), "map range [5, 1]");
  }

  @Test
  void anEmptyPartitionHasNoFile() throws IOException {
    PartitionFile file = new PartitionFile(KEY, FileLayout.partitionFile(root, KEY));
    assertThat(file.finish(ChunkIndex.empty(), true)).isEmpty();
    assertThat(Files.exists(file.path())).isFalse();
    assertThat(ChunkIndex.empty().asList()).containsExactly(0L);
  }

  @Test
  void finishRefusesAnIndexThatDoesNotMatchTheData() {
    PartitionFile file = new PartitionFile(KEY, FileLayout.partitionFile(root, KEY));
    write(file, buffer(new byte[10], 0, 10));
    assertThatThrownBy(() -> file.finish(ChunkIndex.of(0, 11), true))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("wrote 10 bytes")
        .hasMessageContaining(KEY.toString());
  }

  @Test
  void detectsABadMagic() throws IOException {
    Path path = committedFile();
    flipByte(path, Files.size(path) - 1);
    assertCorrupt(path, "bad magic");
  }

  @Test
  void detectsAnUnknownVersion() throws IOException {
    Path path = committedFile();
    writeVersion(path, 0);
    assertCorrupt(path, "unsupported format version");
  }

  @Test
  void tellsANewerVersionFromACorruptFile() throws IOException {
    Path path = committedFile();
    writeVersion(path, PartitionFileFormat.VERSION + 1);
    assertThatThrownBy(() -> PartitionFileReader.readIndex(path))
        .isInstanceOf(PartitionFileReader.NewerFormatException.class)
        .hasMessageContaining(path.toString())
        .hasMessageContaining("format version " + (PartitionFileFormat.VERSION + 1));
  }

  private static void writeVersion(Path path, int version) throws IOException {
    try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(path.toFile(), "rw")) {
      f.seek(f.length() - PartitionFileFormat.TRAILER_SIZE + PartitionFileFormat.TRAILER_VERSION);
      f.writeInt(version);
    }
  }

  @Test
  void detectsACorruptedIndex() throws IOException {
    Path path = committedFile();
    long indexStart = 300;
    flipByte(path, indexStart + PartitionFileFormat.INDEX_ENTRY + 7);
    assertCorrupt(path, "index CRC32C mismatch");
  }

  @Test
  void detectsATrailerThatDoesNotFitTheFile() throws IOException {
    Path path = committedFile();
    flipByte(
        path,
        Files.size(path)
            - PartitionFileFormat.TRAILER_SIZE
            + PartitionFileFormat.TRAILER_CHUNK_COUNT
            + 3);
    assertCorrupt(path, "does not fit");
  }

  @Test
  void detectsATruncatedFile() throws IOException {
    Path path = committedFile();
    try (RandomAccessFile raf = new RandomAccessFile(path.toFile(), "rw")) {
      raf.setLength(raf.length() - 5);
    }
    assertCorrupt(path, "bad magic");
    try (RandomAccessFile raf = new RandomAccessFile(path.toFile(), "rw")) {
      raf.setLength(10);
    }
    assertCorrupt(path, "shorter than");
  }

  @Test
  void aMissingFileIsAStorageFailure() {
    Path path = root.resolve("nope.data");
    assertThatThrownBy(() -> PartitionFileReader.readIndex(path))
        .isInstanceOfSatisfying(
            FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.STORAGE_FAILED))
        .hasMessageContaining(path.toString());
  }

  @Test
  void chunkIndexRejectsOffsetsThatDoNotIncrease() {
    assertThatThrownBy(() -> ChunkIndex.of(0, 5, 5)).hasMessageContaining("strictly increase");
    assertThatThrownBy(() -> ChunkIndex.of(1, 5)).hasMessageContaining("start at 0");
    assertThat(ChunkIndex.of(0, 5, 9).asList()).containsExactly(0L, 5L, 9L);
  }

  @Test
  void appIdsAreMadeSafeWithoutCollisions() {
    Path plain = FileLayout.shuffleDir(root, new ShuffleId(new AppId("app_1"), 0));
    Path unsafe = FileLayout.shuffleDir(root, new ShuffleId(new AppId("app/1"), 0));
    Path dots = FileLayout.shuffleDir(root, new ShuffleId(new AppId(".."), 0));
    assertThat(plain).isEqualTo(root.resolve("app_1/0"));
    assertThat(unsafe.getParent().getParent()).isEqualTo(root);
    assertThat(unsafe).isNotEqualTo(plain);
    assertThat(dots.getParent().getParent()).isEqualTo(root);
    assertThat(dots.getParent().getFileName().toString()).startsWith("_");
  }

  /** A committed file of 300 data bytes in 3 chunks. */
  private Path committedFile() throws IOException {
    PartitionFile file = new PartitionFile(KEY, FileLayout.partitionFile(root, KEY));
    write(file, buffer(new byte[300], 0, 300));
    file.finish(ChunkIndex.of(0, 100, 200, 300), true);
    assertThat(PartitionFileReader.readIndex(file.path()).chunkCount()).isEqualTo(3);
    return file.path();
  }

  private static void assertCorrupt(Path path, String why) {
    assertThatThrownBy(() -> PartitionFileReader.readIndex(path))
        .isInstanceOfSatisfying(
            FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.DATA_CORRUPTED))
        .hasMessageContaining(path.toString())
        .hasMessageContaining(why);
  }

  private static void flipByte(Path path, long position) throws IOException {
    try (RandomAccessFile raf = new RandomAccessFile(path.toFile(), "rw")) {
      raf.seek(position);
      int b = raf.read();
      raf.seek(position);
      raf.write(b ^ 0x40);
    }
  }

  /** Writes {@code buffers} and releases them: the file only borrows. */
  private static void write(PartitionFile file, ByteBuf... buffers) {
    try {
      file.write(List.of(buffers));
    } finally {
      for (ByteBuf b : buffers) {
        b.release();
      }
    }
  }

  private static ByteBuf buffer(byte[] data, int from, int length) {
    ByteBuf buffer = PooledByteBufAllocator.DEFAULT.directBuffer(length);
    buffer.writeBytes(data, from, length);
    return buffer;
  }
}
