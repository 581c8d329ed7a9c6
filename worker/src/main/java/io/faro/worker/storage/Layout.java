package io.faro.worker.storage;

import java.util.Locale;

/**
 * How a disk lays out the data of the partition locations it holds (faro.worker.tier.TIER.layout).
 */
public enum Layout {
  /**
   * A file per location ({@link PartitionFileFormat}), written a flush buffer at a time: a
   * location's data is one contiguous range, read in one request.
   */
  FILES,
  /**
   * Runs ({@link RunFile}): the data a shuffle's locations on the disk buffered is written together
   * as one sequential file, sorted by partition, so that the disk writes few large files instead of
   * many small ones, and reducers that fetch in partition order read each run forward.
   */
  RUNS;

  /** The name in configuration files. */
  public String configName() {
    return name().toLowerCase(Locale.ROOT);
  }
}
