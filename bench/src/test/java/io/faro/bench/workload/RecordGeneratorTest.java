package io.faro.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.batch.BatchEncoder;
import io.faro.common.batch.BatchFormat;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class RecordGeneratorTest {
  @Test
  void sameSeedAndMapGiveTheSameRecordsAndOtherMapsOthers() {
    byte[] first = records(new RecordGenerator(1, 0, 100, 64, DataKind.RANDOM), 100);
    byte[] again = records(new RecordGenerator(1, 0, 100, 64, DataKind.RANDOM), 100);
    byte[] otherMap = records(new RecordGenerator(1, 1, 100, 64, DataKind.RANDOM), 100);

    assertThat(again).isEqualTo(first);
    assertThat(otherMap).isNotEqualTo(first);
  }

  @Test
  void theKeyDecidesThePartitionAndEveryPartitionGetsRecords() {
    RecordGenerator generator = new RecordGenerator(3, 2, 40, 16, DataKind.COMPRESSIBLE);
    byte[] record = new byte[40];
    int[] counts = new int[16];
    for (int i = 0; i < 16_000; i++) {
      int partition = generator.next(record);
      assertThat(RecordGenerator.partitionOf(RecordGenerator.key(record, 0), 16))
          .isEqualTo(partition);
      counts[partition]++;
    }
    assertThat(Arrays.stream(counts).min().orElseThrow()).isGreaterThan(800);
  }

  @Test
  void compressibleDataShrinksWithLz4AndRandomDataDoesNot() {
    assertThat(encodedSize(DataKind.COMPRESSIBLE)).isLessThan(64 * 1024 * 2 / 3);
    assertThat(encodedSize(DataKind.RANDOM)).isEqualTo(64 * 1024 + BatchFormat.HEADER);
  }

  @Test
  void oddRecordSizesAreFilledToTheEnd() {
    byte[] record = new byte[13];
    new RecordGenerator(9, 0, 13, 4, DataKind.RANDOM).next(record);
    byte[] tail = Arrays.copyOfRange(record, 8, 13);
    assertThat(tail).isNotEqualTo(new byte[5]);
  }

  private static int encodedSize(DataKind data) {
    byte[] raw = records(new RecordGenerator(1, 0, 100, 8, data), 64 * 1024 / 100);
    byte[] exact = Arrays.copyOf(raw, 64 * 1024);
    ByteBuf batch =
        new BatchEncoder(true, UnpooledByteBufAllocator.DEFAULT)
            .encode(0, 0, 0, exact, 0, exact.length);
    try {
      return batch.readableBytes();
    } finally {
      batch.release();
    }
  }

  private static byte[] records(RecordGenerator generator, int count) {
    byte[] out = new byte[count * 100 + 100];
    byte[] record = new byte[100];
    for (int i = 0; i < count + 1; i++) {
      generator.next(record);
      System.arraycopy(record, 0, out, i * 100, 100);
    }
    return out;
  }
}
