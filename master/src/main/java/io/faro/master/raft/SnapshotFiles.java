package io.faro.master.raft;

import io.faro.proto.MasterSnapshot;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import org.apache.ratis.io.MD5Hash;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.util.MD5FileUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's snapshot files, in the state-machine directory of the Raft storage.
 *
 * <p>Format: one file {@code snapshot.<term>_<index>} holding one serialized {@code MasterSnapshot}
 * (whose own term and index repeat the name), and beside it {@code snapshot.<term>_<index>.md5}
 * with the file's MD5 (Ratis' {@code MD5FileUtil} format).
 *
 * <p>Writes are crash-safe: the data goes to {@code snapshot.<term>_<index>.tmp} and is synced, the
 * checksum file is written, and only then is the data renamed to its final name. So a file with a
 * final name is complete and has its checksum; a leftover {@code .tmp} is deleted on start. A
 * snapshot whose checksum is missing or wrong fails the load: the log behind it is purged, so
 * starting from an empty state would silently lose it.
 *
 * <p>Used by the state machine on the Ratis apply thread (write) and during initialisation (read);
 * not shared otherwise.
 */
final class SnapshotFiles {
  private static final Logger LOG = LoggerFactory.getLogger(SnapshotFiles.class);
  private static final String TMP_SUFFIX = ".tmp";

  private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();

  void init(RaftStorage raftStorage) throws IOException {
    storage.init(raftStorage);
    deleteLeftovers(raftStorage.getStorageDir().getStateMachineDir().toPath());
  }

  SimpleStateMachineStorage storage() {
    return storage;
  }

  /** The newest snapshot on disk, or null when there is none. */
  SingleFileSnapshotInfo latest() {
    return storage.loadLatestSnapshot();
  }

  void write(MasterSnapshot snapshot, TermIndex applied) throws IOException {
    File target = storage.getSnapshotFile(applied.getTerm(), applied.getIndex());
    Path tmp = target.toPath().resolveSibling(target.getName() + TMP_SUFFIX);
    try (FileChannel channel =
        FileChannel.open(
            tmp,
            StandardOpenOption.CREATE,
            StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING)) {
      OutputStream out = Channels.newOutputStream(channel);
      snapshot.writeTo(out);
      out.flush();
      channel.force(true);
    }
    MD5Hash md5 = MD5FileUtil.computeMd5ForFile(tmp.toFile());
    MD5FileUtil.saveMD5File(target, md5);
    Files.move(tmp, target.toPath(), StandardCopyOption.ATOMIC_MOVE);
    storage.updateLatestSnapshot(
        new SingleFileSnapshotInfo(new FileInfo(target.toPath(), md5), applied));
    LOG.info("Wrote master snapshot {} ({} bytes)", target, Files.size(target.toPath()));
  }

  /** Reads and verifies {@code info}; throws when the file does not match its checksum or name. */
  MasterSnapshot read(SingleFileSnapshotInfo info) throws IOException {
    Path path = info.getFile().getPath();
    MD5Hash expected = info.getFile().getFileDigest();
    if (expected == null) {
      throw new IOException(
          "snapshot "
              + path
              + " has no checksum file "
              + MD5FileUtil.getDigestFileForFile(path.toFile())
              + "; refusing to load it");
    }
    // verifySavedMD5 only compares two stored digests; the data itself must be hashed again.
    MD5Hash actual = MD5FileUtil.computeMd5ForFile(path.toFile());
    if (!actual.equals(expected)) {
      throw new IOException(
          "snapshot "
              + path
              + " does not match its MD5 checksum (expected "
              + expected
              + ", computed "
              + actual
              + "); refusing to load it");
    }
    MasterSnapshot snapshot;
    try (InputStream in = Files.newInputStream(path)) {
      snapshot = MasterSnapshot.parseFrom(in);
    }
    TermIndex named = SimpleStateMachineStorage.getTermIndexFromSnapshotFile(path.toFile());
    if (snapshot.getTerm() != named.getTerm() || snapshot.getIndex() != named.getIndex()) {
      throw new IOException(
          "snapshot "
              + path
              + " holds term "
              + snapshot.getTerm()
              + " index "
              + snapshot.getIndex()
              + ", not what its name says");
    }
    return snapshot;
  }

  private static void deleteLeftovers(Path directory) throws IOException {
    if (!Files.isDirectory(directory)) {
      return;
    }
    try (DirectoryStream<Path> files =
        Files.newDirectoryStream(directory, "snapshot.*" + TMP_SUFFIX)) {
      for (Path file : files) {
        LOG.warn("Deleting unfinished snapshot {}", file);
        Files.deleteIfExists(file);
      }
    }
  }
}
