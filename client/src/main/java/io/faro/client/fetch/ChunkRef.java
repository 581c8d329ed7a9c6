package io.faro.client.fetch;

import io.faro.client.fetch.ReducerFileGroups.CommittedFile;
import io.faro.common.id.ShuffleId;
import java.util.Locale;

/** Chunk {@code chunkIndex} of {@code file}, the copy of {@code group} it is fetched from. */
record ChunkRef(EpochGroup group, CommittedFile file, int chunkIndex) {
  /** Whether {@code other} is this very chunk of this very copy (null: no). */
  boolean sameAs(ChunkRef other) {
    return other != null
        && other.group() == group
        && other.chunkIndex() == chunkIndex
        && other.file() == file;
  }

  String describe(ShuffleId shuffle) {
    return "chunk "
        + chunkIndex
        + "/"
        + file.chunks()
        + " of partition "
        + file.location().partition()
        + " epoch "
        + file.location().epoch()
        + " ("
        + file.location().role().name().toLowerCase(Locale.ROOT)
        + ") of shuffle "
        + shuffle
        + " on worker "
        + file.location().worker();
  }
}
