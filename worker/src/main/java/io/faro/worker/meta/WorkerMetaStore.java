package io.faro.worker.meta;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.InvalidProtocolBufferException;
import io.faro.common.id.AppId;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.proto.CommittedFileRecordP;
import io.faro.proto.ShuffleRecordP;
import io.faro.proto.WorkerMetaVersionP;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * What this worker holds, kept across restarts in a RocksDB database: for every shuffle with
 * committed partitions, its owner token, and for each committed partition location its file (disk,
 * path, lengths, chunk count, format version). Written when a commit completes, before the commit
 * is answered (forced to the disk only with faro.worker.commit.sync, as the files are); read at
 * start, when the worker checks each listed file and serves the good ones again; a shuffle's
 * records go when the shuffle expires. A shuffle whose locations a graceful stop sealed while it
 * was still pushed is recorded the same way, marked sealed (a field that earlier versions of this
 * layout never set: compatible both ways, see docs/failures.md, "Restart").
 *
 * <p>Layout, version {@value #VERSION}: key {@code "v"} holds a {@link WorkerMetaVersionP}; key
 * {@code "s" app 0x00 shuffle(4 bytes)} a {@link ShuffleRecordP}; key {@code "p" app 0x00
 * shuffle(4) partition(4) epoch(4)} a {@link CommittedFileRecordP}. Integers are big-endian, so a
 * shuffle's partitions sort together after its shuffle record. App ids hold no control characters
 * (see {@code IdRules}), so 0x00 ends one.
 *
 * <p>One class, past 400 lines: the layout's keys and encodings, and every read and write that
 * depends on them, stay in one place, so that the layout version governs all of it.
 *
 * <p>Thread-safe: RocksDB is; {@link #close} waits for the calls in progress, and later calls fail
 * with an IOException (a native handle used after close would take the process down).
 */
public final class WorkerMetaStore implements AutoCloseable {
  /** The layout version this code writes and reads. */
  public static final int VERSION = 1;

  private static final byte[] VERSION_KEY = {'v'};
  private static final byte SHUFFLE = 's';
  private static final byte PARTITION = 'p';

  static {
    RocksDB.loadLibrary();
  }

  /** The store was written by a newer Faro: this one must not read it, nor drop it. */
  public static final class NewerVersionException extends IOException {
    NewerVersionException(String message) {
      super(message);
    }
  }

  /**
   * A shuffle as the store lists it: its owner token, its committed (or, with {@code sealed},
   * sealed) partitions.
   */
  public record StoredShuffle(
      ShuffleId shuffle,
      long ownerToken,
      String appNonce,
      boolean sealed,
      Map<PartitionKey, CommittedFileRecordP> partitions,
      long[] emptyLocations) {}

  private final Path dir;
  private final Options options;
  private final RocksDB db;
  private final String workerId;
  private final WriteOptions synced;

  /**
   * Written to the operating system at once (RocksDB hands each write of its log to the kernel), so
   * a process that dies loses none; only a machine that crashes before the kernel writes it back
   * can.
   */
  private final WriteOptions unsynced;

  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private boolean closed;
  private boolean createdNow;

  private WorkerMetaStore(Path dir, Options options, RocksDB db, String workerId) {
    this.dir = dir;
    this.options = options;
    this.db = db;
    this.workerId = workerId;
    this.synced = new WriteOptions().setSync(true);
    this.unsynced = new WriteOptions().setSync(false);
  }

  /**
   * Writes this layout's version into a store that had none ({@link #createdNow}), once it holds
   * everything it should (a rebuild is done): from then on it is a complete store.
   */
  public void markCurrent() throws IOException {
    lock.readLock().lock();
    try {
      checkOpen();
      db.put(
          synced,
          VERSION_KEY,
          WorkerMetaVersionP.newBuilder()
              .setVersion(VERSION)
              .setWorkerId(workerId)
              .build()
              .toByteArray());
    } catch (RocksDBException e) {
      throw new IOException("cannot write the version of the metadata store in " + dir, e);
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Opens (or creates) the store in {@code dir} for worker {@code workerId}.
   *
   * @throws NewerVersionException when it was written by a newer Faro (its version is above {@link
   *     #VERSION}: this worker would misread it, so it refuses to start rather than drop what it
   *     cannot read)
   * @throws IOException when it cannot be opened (corrupt, unreadable)
   */
  public static WorkerMetaStore open(Path dir, String workerId) throws IOException {
    requireNonNull(dir, "dir is null");
    Files.createDirectories(dir);
    // Read-only first: a store of a newer Faro is refused before RocksDB writes anything into it
    // (an open for writing rewrites its manifest and options files).
    if (Files.exists(dir.resolve("CURRENT"))) {
      checkNotNewer(dir);
    }
    Options options = new Options().setCreateIfMissing(true);
    RocksDB db;
    try {
      db = RocksDB.open(options, dir.toString());
    } catch (RocksDBException e) {
      options.close();
      throw new IOException("cannot open the worker's metadata store in " + dir + ": " + e, e);
    }
    WorkerMetaStore store = new WorkerMetaStore(dir, options, db, workerId);
    try {
      store.checkVersion();
    } catch (IOException | RuntimeException e) {
      store.close();
      throw e;
    }
    return store;
  }

  /** Refuses the store in {@code dir} if a newer Faro wrote it, opening it read-only. */
  private static void checkNotNewer(Path dir) throws IOException {
    try (Options options = new Options();
        RocksDB db = RocksDB.openReadOnly(options, dir.toString())) {
      byte[] stored = db.get(VERSION_KEY);
      if (stored != null) {
        refuseNewer(dir, WorkerMetaVersionP.parseFrom(stored).getVersion());
      }
    } catch (RocksDBException e) {
      // Unreadable read-only (e.g. a store left open by a crash with a log to replay): the
      // open for writing below reads it, and checks its version the same way.
    }
  }

  private static void refuseNewer(Path dir, int version) throws NewerVersionException {
    if (version > VERSION) {
      throw new NewerVersionException(
          "the worker's metadata store in "
              + dir
              + " has version "
              + version
              + ", newer than this Faro reads ("
              + VERSION
              + "): it was written by a newer Faro. Start that version again, or move the"
              + " directory away to start this worker empty (its shuffle files are then deleted)");
    }
  }

  /**
   * A store without a version is new (or its rebuild never finished): it is rebuilt, and gets its
   * version only then ({@link #markCurrent}), so that a rebuild that stopped half-way is done again
   * at the next start rather than taken for a complete store.
   */
  private void checkVersion() throws IOException {
    try {
      byte[] stored = db.get(VERSION_KEY);
      if (stored == null) {
        createdNow = true;
        return;
      }
      refuseNewer(dir, WorkerMetaVersionP.parseFrom(stored).getVersion());
    } catch (RocksDBException | InvalidProtocolBufferException e) {
      throw new IOException(
          "cannot read the version of the metadata store in " + dir + ": " + e, e);
    }
  }

  /**
   * Records that {@code shuffle} (reserved with {@code ownerToken}) committed {@code partitions},
   * and {@code emptyLocations} (partition << 32 | epoch, ascending) with no data, in the shuffle's
   * own record: in one write; {@code sync} forces it to the disk before returning (see
   * faro.worker.commit.sync: the record is worth an fsync only when the files it lists got theirs).
   */
  public void committed(
      ShuffleId shuffle,
      long ownerToken,
      String appNonce,
      long committedAtMs,
      Map<PartitionKey, CommittedFileRecordP> partitions,
      long[] emptyLocations,
      boolean sync)
      throws IOException {
    write(shuffle, ownerToken, appNonce, committedAtMs, false, partitions, emptyLocations, sync);
  }

  /**
   * Records that {@code shuffle} (reserved with {@code ownerToken}), still pushed, had {@code
   * partitions} (and {@code emptyLocations}) sealed on this worker's way out, in one write ({@code
   * sync} as for {@link #committed}); a later {@link #committed} replaces the shuffle's record.
   */
  public void sealed(
      ShuffleId shuffle,
      long ownerToken,
      String appNonce,
      long sealedAtMs,
      Map<PartitionKey, CommittedFileRecordP> partitions,
      long[] emptyLocations,
      boolean sync)
      throws IOException {
    write(shuffle, ownerToken, appNonce, sealedAtMs, true, partitions, emptyLocations, sync);
  }

  private void write(
      ShuffleId shuffle,
      long ownerToken,
      String appNonce,
      long atMs,
      boolean sealed,
      Map<PartitionKey, CommittedFileRecordP> partitions,
      long[] emptyLocations,
      boolean sync)
      throws IOException {
    ShuffleRecordP.Builder record =
        ShuffleRecordP.newBuilder()
            .setOwnerToken(ownerToken)
            .setAppNonce(appNonce)
            .setCommittedAtMs(atMs)
            .setSealed(sealed);
    for (long location : emptyLocations) {
      record.addEmptyLocations(location);
    }
    lock.readLock().lock();
    try (WriteBatch batch = new WriteBatch()) {
      checkOpen();
      batch.put(shuffleKey(shuffle), record.build().toByteArray());
      for (Map.Entry<PartitionKey, CommittedFileRecordP> e : partitions.entrySet()) {
        batch.put(partitionKey(e.getKey()), e.getValue().toByteArray());
      }
      db.write(sync ? synced : unsynced, batch);
    } catch (RocksDBException e) {
      throw new IOException("cannot record the commit of shuffle " + shuffle + " in " + dir, e);
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Forgets {@code shuffle} and its partitions, unsynced: a machine crash may bring the record back
   * (and with it, if the unlinks were lost too, the files); the worker then serves the shuffle
   * again until its next heartbeat, when the masters, which no longer know it, expire it. Shuffle
   * ids are never reused, so no reader can mistake it for another.
   */
  public void forget(ShuffleId shuffle) throws IOException {
    byte[] from = shuffleKey(shuffle);
    byte[] to = prefixEnd(partitionPrefix(shuffle));
    lock.readLock().lock();
    try (WriteBatch batch = new WriteBatch()) {
      checkOpen();
      batch.delete(from);
      batch.deleteRange(partitionPrefix(shuffle), to);
      db.write(unsynced, batch);
    } catch (RocksDBException e) {
      throw new IOException("cannot forget shuffle " + shuffle + " in " + dir, e);
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Forgets one partition location of a shuffle (its file failed the check at start). */
  public void forget(PartitionKey key) throws IOException {
    lock.readLock().lock();
    try {
      checkOpen();
      db.delete(synced, partitionKey(key));
    } catch (RocksDBException e) {
      throw new IOException("cannot forget partition " + key + " in " + dir, e);
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Every shuffle the store lists, with its partitions, in key order.
   *
   * @throws IOException when a record cannot be read (the store is corrupt)
   */
  public List<StoredShuffle> shuffles() throws IOException {
    Map<ShuffleId, ShuffleRecordP> records = new LinkedHashMap<>();
    Map<ShuffleId, Map<PartitionKey, CommittedFileRecordP>> partitions = new LinkedHashMap<>();
    lock.readLock().lock();
    checkOpenUnlocking();
    try (RocksIterator it = db.newIterator()) {
      for (it.seekToFirst(); it.isValid(); it.next()) {
        byte[] key = it.key();
        if (key.length == 0 || key[0] == 'v') {
          continue;
        }
        ByteBuffer k = ByteBuffer.wrap(key, 1, key.length - 1);
        AppId app = readApp(k);
        ShuffleId shuffle = new ShuffleId(app, k.getInt());
        if (key[0] == SHUFFLE) {
          records.put(shuffle, ShuffleRecordP.parseFrom(it.value()));
          partitions.computeIfAbsent(shuffle, s -> new LinkedHashMap<>());
        } else if (key[0] == PARTITION) {
          PartitionKey p = new PartitionKey(shuffle, k.getInt(), k.getInt());
          partitions
              .computeIfAbsent(shuffle, s -> new LinkedHashMap<>())
              .put(p, CommittedFileRecordP.parseFrom(it.value()));
        } else {
          throw new IOException("unknown record kind " + key[0] + " in the store in " + dir);
        }
      }
      it.status();
    } catch (RocksDBException | RuntimeException | InvalidProtocolBufferException e) {
      throw new IOException("cannot read the metadata store in " + dir + ": " + e, e);
    } finally {
      lock.readLock().unlock();
    }
    List<StoredShuffle> result = new ArrayList<>();
    partitions.forEach(
        (shuffle, parts) -> {
          ShuffleRecordP record =
              records.getOrDefault(shuffle, ShuffleRecordP.getDefaultInstance());
          result.add(
              new StoredShuffle(
                  shuffle,
                  record.getOwnerToken(),
                  record.getAppNonce(),
                  record.getSealed(),
                  parts,
                  record.getEmptyLocationsList().stream().mapToLong(Long::longValue).toArray()));
        });
    return result;
  }

  public Path dir() {
    return dir;
  }

  /**
   * Whether the store had no version when opened: new (no earlier run of this worker wrote one
   * here), or its rebuild never finished.
   */
  public boolean createdNow() {
    return createdNow;
  }

  @Override
  public void close() {
    lock.writeLock().lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      synced.close();
      unsynced.close();
      db.close();
      options.close();
    } finally {
      lock.writeLock().unlock();
    }
  }

  // Under the read lock.
  private void checkOpen() throws IOException {
    if (closed) {
      throw new IOException("the metadata store in " + dir + " is closed");
    }
  }

  // Under the read lock, which it releases when it throws.
  private void checkOpenUnlocking() throws IOException {
    if (closed) {
      lock.readLock().unlock();
      throw new IOException("the metadata store in " + dir + " is closed");
    }
  }

  private static byte[] shuffleKey(ShuffleId shuffle) {
    byte[] app = shuffle.app().value().getBytes(StandardCharsets.UTF_8);
    return ByteBuffer.allocate(1 + app.length + 1 + 4)
        .put(SHUFFLE)
        .put(app)
        .put((byte) 0)
        .putInt(shuffle.shuffle())
        .array();
  }

  private static byte[] partitionPrefix(ShuffleId shuffle) {
    byte[] app = shuffle.app().value().getBytes(StandardCharsets.UTF_8);
    return ByteBuffer.allocate(1 + app.length + 1 + 4)
        .put(PARTITION)
        .put(app)
        .put((byte) 0)
        .putInt(shuffle.shuffle())
        .array();
  }

  private static byte[] partitionKey(PartitionKey key) {
    byte[] prefix = partitionPrefix(key.shuffle());
    return ByteBuffer.allocate(prefix.length + 8)
        .put(prefix)
        .putInt(key.partition())
        .putInt(key.epoch())
        .array();
  }

  /** The smallest key after every key that starts with {@code prefix}. */
  private static byte[] prefixEnd(byte[] prefix) {
    byte[] end = prefix.clone();
    for (int i = end.length - 1; i >= 0; i--) {
      if (end[i] != (byte) 0xff) {
        end[i]++;
        return Arrays.copyOf(end, i + 1);
      }
    }
    throw new IllegalArgumentException("no key follows a prefix of 0xff bytes");
  }

  private static AppId readApp(ByteBuffer k) {
    int start = k.position();
    int end = start;
    while (k.get(end) != 0) {
      end++;
    }
    String app = new String(k.array(), start, end - start, StandardCharsets.UTF_8);
    k.position(end + 1);
    return new AppId(app);
  }
}
