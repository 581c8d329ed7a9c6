package io.faro.worker.partition;

import io.faro.common.id.ShuffleId;
import java.io.IOException;

/**
 * Where a {@link PartitionStore} records its commits so that they outlive the process (the worker's
 * metadata store), and forgets them when a shuffle expires.
 */
public interface CommitLog {
  /** Records nothing: a restarted worker serves nothing of an earlier run. */
  CommitLog NONE =
      new CommitLog() {
        @Override
        public void committed(
            ShuffleId shuffle, long ownerToken, String appNonce, ShuffleCommit commit) {}

        @Override
        public void sealed(
            ShuffleId shuffle, long ownerToken, String appNonce, ShuffleCommit sealed) {}

        @Override
        public void forgotten(ShuffleId shuffle) {}
      };

  /**
   * {@code shuffle}, reserved with {@code ownerToken} by the app registration {@code appNonce} (""
   * for none), committed {@code commit}; durably.
   */
  void committed(ShuffleId shuffle, long ownerToken, String appNonce, ShuffleCommit commit)
      throws IOException;

  /**
   * {@code shuffle}, still pushed, had its locations {@code sealed} (a graceful stop, a drain): a
   * restart serves them once the shuffle is committed; durably. A later {@link #committed} of the
   * shuffle replaces this record.
   */
  void sealed(ShuffleId shuffle, long ownerToken, String appNonce, ShuffleCommit sealed)
      throws IOException;

  /** {@code shuffle} expired: its files are being deleted. */
  void forgotten(ShuffleId shuffle) throws IOException;
}
