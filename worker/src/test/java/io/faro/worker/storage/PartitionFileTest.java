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
