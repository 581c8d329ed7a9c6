package io.faro.worker.partition;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.PartitionKey;
import io.faro.worker.storage.ChunkIndex;
import io.faro.worker.storage.Disk;
import io.faro.worker.storage.PartitionFile;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The files layout: a location's bytes go to a file of its own ({@link PartitionFile}), handed to
 * one flusher thread of the disk a flush buffer (faro.worker.flush.buffer.size) at a time, and
 * finished there with its index and trailer. The file is confined to that thread.
 */
final class OwnFile implements LocationLayout {
  private static final Logger LOG = LoggerFactory.getLogger(OwnFile.class);

  private final PartitionKey key;
  private final Disk disk;
  private final PartitionFile file;
  private final Executor flushThread;
  private final WriterSettings settings;

  OwnFile(PartitionKey key, Disk disk, WriterSettings settings) {
    this.key = requireNonNull(key, "key is null");
    this.disk = requireNonNull(disk, "disk is null");
    this.settings = requireNonNull(settings, "settings is null");
    this.file = disk.newPartitionFile(key);
    this.flushThread = disk.flusher().threadFor(key);
  }

  @Override
  public void added(PartitionWriter writer, long bytes) {
    if (writer.pendingBytes() >= settings.flushBufferSize()) {
      handOver(writer, writer.takePending());
    }
  }

  @Override
  public void flushBuffered(PartitionWriter writer) {
    // Inside the writer's lock, so that the flush is queued behind the ones before it.
    synchronized (writer) {
      if (writer.isOpen() && writer.pendingBytes() > 0) {
        handOver(writer, writer.takePending());
      }
    }
  }

  @Override
  public void finish(
      PartitionWriter writer,
      List<PartitionWriter.Part> parts,
      ChunkIndex chunks,
      CompletableFuture<PartitionCommit> result) {
    // What is still pending is written by the same task that finishes the file: one task per
    // partition on its flush thread, not two (a commit of many small partitions is mostly these).
    try {
      flushThread.execute(
          () -> {
            try {
              if (!parts.isEmpty()) {
                write(writer, parts);
              }
            } catch (RuntimeException e) {
              // Its bytes are missing: finishing then fails the partition (the lengths differ).
              LOG.warn("Partition {}: its last write failed: {}", key, e.toString());
            } finally {
              // Always answered, whatever the write threw: a commit must never wait forever.
              result.complete(finishFile(writer, chunks));
            }
          });
    } catch (RejectedExecutionException e) {
      writer.refuseData();
      PartitionWriter.release(parts);
      result.complete(new PartitionCommit.Failed(key, "worker is shutting down"));
    }
  }

  @Override
  public void dropped(PartitionWriter writer, long bytes) {}

  @Override
  public Optional<Deletion> deletion(PartitionWriter writer) {
    return Optional.of(new Deletion(flushThread, this::deleteFile));
  }

  private void handOver(PartitionWriter writer, List<PartitionWriter.Part> parts) {
    if (parts.isEmpty()) {
      return;
    }
    try {
      flushThread.execute(() -> write(writer, parts));
    } catch (RejectedExecutionException e) {
      writer.refuseData();
      PartitionWriter.release(parts);
    }
  }

  /** On the flush thread. Takes ownership of {@code parts}: releases them once written. */
  private void write(PartitionWriter writer, List<PartitionWriter.Part> parts) {
    try {
      List<ByteBuf> buffers = new ArrayList<>(parts.size());
      for (PartitionWriter.Part part : parts) {
        buffers.add(part.bytes());
      }
      file.write(buffers);
      if (file.failure().isPresent() && !writer.writeFailed()) {
        String why = file.failure().get().getMessage();
        writer.stopOnWriteFailure(why);
        disk.writeFailed(key + ": " + why);
      }
    } finally {
      PartitionWriter.release(parts);
    }
  }

  /** On the flush thread: the index and trailer, and the location's outcome. */
  private PartitionCommit finishFile(PartitionWriter writer, ChunkIndex chunks) {
    try {
      return file.finish(chunks, settings.commitSync())
          .<PartitionCommit>map(
              index -> new PartitionCommit.Committed(key, Optional.of(file.path()), index))
          .orElseGet(
              () -> new PartitionCommit.Committed(key, Optional.empty(), ChunkIndex.empty()));
    } catch (IOException | RuntimeException e) {
      LOG.warn("Commit of partition {} failed: {}", key, e.getMessage());
      if (e instanceof IOException && !writer.writeFailed()) {
        disk.writeFailed(key + " at commit: " + e.getMessage()); // its index or sync failed
      }
      return new PartitionCommit.Failed(key, String.valueOf(e.getMessage()));
    }
  }

  /** On the flush thread. */
  private void deleteFile() {
    try {
      file.delete();
    } catch (IOException e) {
      LOG.warn("Cannot delete {} of partition {}: {}", file.path(), key, e.toString());
    }
  }
}
