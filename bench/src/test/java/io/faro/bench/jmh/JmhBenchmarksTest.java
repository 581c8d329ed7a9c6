package io.faro.bench.jmh;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.bench.workload.DataKind;
import io.faro.worker.partition.PushStatus;
import io.faro.worker.storage.IoMode;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Every JMH benchmark runs once, outside JMH: a benchmark that throws or leaks a buffer fails the
 * build here rather than in the middle of a measurement. Also checks that the annotation processor
 * listed them all.
 */
class JmhBenchmarksTest {
  private final Blackhole blackhole =
      new Blackhole(
          "Today's password is swordfish. I understand instantiating Blackholes directly is dangerous.");

  @Test
  void theAnnotationProcessorListedEveryBenchmark() throws Exception {
    try (InputStream list = getClass().getResourceAsStream("/META-INF/BenchmarkList")) {
      assertThat(list).isNotNull();
      assertThat(new String(list.readAllBytes(), StandardCharsets.UTF_8))
          .contains(
              "FrameCodecBenchmark",
              "BatchCodecBenchmark",
              "PartitionAppendBenchmark",
              "ChunkReadBenchmark");
    }
  }

  @Test
  void frameCodec() {
    FrameCodecBenchmark benchmark = new FrameCodecBenchmark();
    benchmark.bodySize = 65536;
    benchmark.parts = 16;
    benchmark.setUp();
    try {
      benchmark.encode(blackhole);
      benchmark.decode(blackhole);
    } finally {
      benchmark.tearDown();
    }
  }

  @Test
  void batchCodec() {
    for (io.faro.common.batch.BatchFormat.Codec codec :
        io.faro.common.batch.BatchFormat.Codec.values()) {
      BatchCodecBenchmark benchmark = new BatchCodecBenchmark();
      benchmark.codec = codec;
      benchmark.data = DataKind.COMPRESSIBLE;
      benchmark.batchSize = 65536;
      benchmark.setUp();
      try {
        benchmark.encode(blackhole);
        benchmark.decode(blackhole);
      } finally {
        benchmark.tearDown();
      }
    }
  }

  @Test
  void partitionAppend() {
    for (IoMode mode : new IoMode[] {IoMode.BUFFERED, IoMode.DIRECT}) {
      PartitionAppendBenchmark benchmark = new PartitionAppendBenchmark();
      benchmark.partitions = 4;
      benchmark.partSize = 65536;
      benchmark.flushBufferSize = 262144;
      benchmark.ioMode = mode;
      benchmark.setUp();
      try {
        benchmark.newShuffle();
        for (int i = 0; i < 64; i++) {
          assertThat(benchmark.appendAndFlush()).as("%s I/O", mode).isEqualTo(PushStatus.OK);
        }
        benchmark.dropShuffle();
      } finally {
        benchmark.tearDown();
      }
    }
  }

  @Test
  void chunkRead() throws Exception {
    ChunkReadBenchmark benchmark = new ChunkReadBenchmark();
    benchmark.chunkSize = 8 << 20;
    benchmark.setUp();
    try {
      assertThat(benchmark.readChunk()).isGreaterThanOrEqualTo(8 << 20);
      benchmark.readAndVerifyChunk(blackhole);
    } finally {
      benchmark.tearDown();
    }
  }
}
