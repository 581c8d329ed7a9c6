package io.faro.testing;

import io.faro.common.config.FaroConf;
import io.faro.common.network.RequestHandler;
import io.faro.worker.extension.WorkerExtension;
import io.faro.worker.storage.DiskDir;
import java.nio.file.Files;
import java.time.Duration;

/**
 * The faults tests inject into real workers, as a {@link WorkerExtension} that a worker loads when
 * this module is on its class path: connections of the push and fetch ports dropped at random
 * ({@link TestingOptions#DROP_PER_MILLE}, by a {@link ConnectionDropper}), and writes slowed down
 * on the disks whose directory holds a file named {@value #SLOW_DISK_FILE} ({@link
 * TestingOptions#SLOW_DISK_DELAY}; the file is looked for at each check of the disk, so a test
 * slows a disk down by creating it and lets it recover by deleting it). With both keys at their
 * defaults it does nothing, and looks for no file.
 */
public final class FaultInjection implements WorkerExtension {
  /**
   * While a file of this name is in a disk's directory, writes to that disk take {@link
   * TestingOptions#SLOW_DISK_DELAY} longer per MiB.
   */
  public static final String SLOW_DISK_FILE = ".faro-testing-slow";

  private int dropPerMille;
  private Duration slowDiskDelay = Duration.ZERO;

  /** For {@link java.util.ServiceLoader}; {@link #configure} sets what it does. */
  public FaultInjection() {}

  @Override
  public void configure(FaroConf conf) {
    dropPerMille = conf.get(TestingOptions.DROP_PER_MILLE);
    slowDiskDelay = conf.get(TestingOptions.SLOW_DISK_DELAY);
  }

  @Override
  public String describe() {
    return (dropPerMille == 0
            ? "drops no connection"
            : "drops the connection of about "
                + dropPerMille
                + " of every 1000 push and fetch requests")
        + " ("
        + TestingOptions.DROP_PER_MILLE.key()
        + "="
        + dropPerMille
        + "); "
        + (slowDiskDelay.isZero()
            ? "slows no disk"
            : "slows writes by "
                + slowDiskDelay.toMillis()
                + " ms per MiB on disks holding "
                + SLOW_DISK_FILE)
        + " ("
        + TestingOptions.SLOW_DISK_DELAY.key()
        + "="
        + slowDiskDelay.toMillis()
        + "ms)";
  }

  @Override
  public RequestHandler wrapPush(RequestHandler push) {
    return ConnectionDropper.wrap(push, dropPerMille);
  }

  @Override
  public RequestHandler wrapFetch(RequestHandler fetch) {
    return ConnectionDropper.wrap(fetch, dropPerMille);
  }

  @Override
  public Duration diskWriteDelayPerMiB(DiskDir disk) {
    if (slowDiskDelay.isZero() || !Files.exists(disk.path().resolve(SLOW_DISK_FILE))) {
      return Duration.ZERO;
    }
    return slowDiskDelay;
  }
}
