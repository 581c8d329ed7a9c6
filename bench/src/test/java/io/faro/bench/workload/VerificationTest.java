package io.faro.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Write-then-read of generated records through the tallies: what arrives intact, in any order,
 * verifies; a lost, duplicated, altered, misplaced or cut record does not.
 */
class VerificationTest {
  private static final int RECORD_SIZE = 100;
  private static final int PARTITIONS = 8;

  private PartitionTally written;

  /** readsByPartition.get(p): the records of partition p, as a reader would get them. */
  private List<List<byte[]>> readsByPartition;

  @BeforeEach
  void writeTwoMaps() {
    written = new PartitionTally(PARTITIONS);
    readsByPartition = new ArrayList<>();
    for (int p = 0; p < PARTITIONS; p++) {
      readsByPartition.add(new ArrayList<>());
    }
    for (int map = 0; map < 2; map++) {
      RecordGenerator generator =
          new RecordGenerator(11, map, RECORD_SIZE, PARTITIONS, DataKind.COMPRESSIBLE);
      for (int i = 0; i < 500; i++) {
        byte[] record = new byte[RECORD_SIZE];
        int partition = generator.next(record);
        written.add(partition, RECORD_SIZE, RecordHash.of(record, 0, RECORD_SIZE));
        readsByPartition.get(partition).add(record);
      }
    }
    // Batches of different maps land in any order.
    readsByPartition.forEach(records -> Collections.shuffle(records, new Random(5)));
  }

  private PartitionTally read() {
    PartitionTally read = new PartitionTally(PARTITIONS);
    for (int p = 0; p < PARTITIONS; p++) {
      for (byte[] record : readsByPartition.get(p)) {
        read.addRecords(p, record, record.length, RECORD_SIZE);
      }
    }
    return read;
  }

  @Test
  void everyRecordIntactInAnyOrderVerifies() {
    Verification verification = Verification.compare(written, read());

    assertThat(verification.verified()).isTrue();
    assertThat(verification.mismatchedPartitions()).isZero();
    assertThat(read().totalRecords()).isEqualTo(1000);
    assertThat(read().totalBytes()).isEqualTo(1000L * RECORD_SIZE);
  }

  @Test
  void aCorruptedByteFailsOnlyItsPartitionAndIsNamed() {
    byte[] record = readsByPartition.get(3).get(7);
    record[50] ^= 0x10;

    Verification verification = Verification.compare(written, read());

    assertThat(verification.verified()).isFalse();
    assertThat(verification.mismatchedPartitions()).isEqualTo(1);
    assertThat(verification.examples())
        .singleElement()
        .asString()
        .startsWith("partition 3:")
        .contains("checksum");
  }

  @Test
  void aLostOrDuplicatedRecordFails() {
    readsByPartition.get(1).remove(0);
    readsByPartition.get(2).add(readsByPartition.get(2).get(0));

    Verification verification = Verification.compare(written, read());

    assertThat(verification.verified()).isFalse();
    assertThat(verification.mismatchedPartitions()).isEqualTo(2);
  }

  @Test
  void aRecordReadFromTheWrongPartitionFailsBoth() {
    readsByPartition.get(5).add(readsByPartition.get(4).remove(0));

    assertThat(Verification.compare(written, read()).mismatchedPartitions()).isEqualTo(2);
  }

  @Test
  void aCutRecordFails() {
    List<byte[]> records = readsByPartition.get(0);
    byte[] cut = new byte[RECORD_SIZE - 1];
    System.arraycopy(records.get(0), 0, cut, 0, cut.length);
    records.set(0, cut);

    assertThat(Verification.compare(written, read()).verified()).isFalse();
  }
}
