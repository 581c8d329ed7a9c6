package io.faro.bench.workload;

import java.util.ArrayList;
import java.util.List;

/**
 * The outcome of comparing what was written with what was read, partition by partition.
 *
 * @param verified whether every partition matched in records, bytes and checksum
 * @param mismatchedPartitions how many partitions differ
 * @param examples a description of the first few that differ
 */
public record Verification(boolean verified, int mismatchedPartitions, List<String> examples) {
  private static final int EXAMPLES = 5;

  public Verification {
    examples = List.copyOf(examples);
  }

  public static Verification compare(PartitionTally written, PartitionTally read) {
    if (written.partitions() != read.partitions()) {
      return new Verification(
          false,
          Math.max(written.partitions(), read.partitions()),
          List.of("written " + written.partitions() + " partitions, read " + read.partitions()));
    }
    int mismatched = 0;
    List<String> examples = new ArrayList<>();
    for (int p = 0; p < written.partitions(); p++) {
      if (written.records(p) == read.records(p)
          && written.bytes(p) == read.bytes(p)
          && written.checksum(p) == read.checksum(p)) {
        continue;
      }
      mismatched++;
      if (examples.size() < EXAMPLES) {
        examples.add(
            String.format(
                "partition %d: wrote %d records, %d bytes, checksum %016x; read %d records, "
                    + "%d bytes, checksum %016x",
                p,
                written.records(p),
                written.bytes(p),
                written.checksum(p),
                read.records(p),
                read.bytes(p),
                read.checksum(p)));
      }
    }
    return new Verification(mismatched == 0, mismatched, examples);
  }
}
