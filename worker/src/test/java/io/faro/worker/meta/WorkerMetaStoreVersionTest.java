package io.faro.worker.meta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.proto.WorkerMetaVersionP;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

/**
 * A metadata store written by a newer Faro (a layout version above this one's) stops the worker
 * with a message that says so, and the refused open changes nothing in it: the newer release reads
 * it again as it left it.
 */
class WorkerMetaStoreVersionTest {
  @TempDir Path dir;

  @Test
  void aStoreOfANewerLayoutIsRefusedAndLeftAsItWas() throws Exception {
    Path store = dir.resolve("meta");
    try (WorkerMetaStore current = WorkerMetaStore.open(store, "w1")) {
      current.markCurrent();
    }
    RocksDB.loadLibrary();
    try (Options options = new Options();
        RocksDB db = RocksDB.open(options, store.toString())) {
      db.put(
          new byte[] {'v'},
          WorkerMetaVersionP.newBuilder()
              .setVersion(WorkerMetaStore.VERSION + 1)
              .build()
              .toByteArray());
    }
    Map<String, byte[]> before = contents(store);

    assertThatThrownBy(() -> WorkerMetaStore.open(store, "w1"))
        .isInstanceOf(WorkerMetaStore.NewerVersionException.class)
        .hasMessageContaining("has version " + (WorkerMetaStore.VERSION + 1))
        .hasMessageContaining("newer than this Faro reads (" + WorkerMetaStore.VERSION + ")");

    Map<String, byte[]> after = contents(store);
    assertThat(after.keySet()).isEqualTo(before.keySet());
    before.forEach((name, bytes) -> assertThat(after.get(name)).as(name).isEqualTo(bytes));
  }

  /** Every file of the store but RocksDB's own info logs, by name. */
  private static Map<String, byte[]> contents(Path store) throws IOException {
    Map<String, byte[]> files = new TreeMap<>();
    try (Stream<Path> list = Files.list(store)) {
      for (Path p : list.toList()) {
        String name = p.getFileName().toString();
        if (!name.startsWith("LOG") && !name.equals("LOCK")) {
          files.put(name, Files.readAllBytes(p));
        }
      }
    }
    return files;
  }
}
