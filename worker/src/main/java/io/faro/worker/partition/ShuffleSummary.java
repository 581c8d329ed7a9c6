package io.faro.worker.partition;

import io.faro.common.id.ShuffleId;

/** What this worker holds of one shuffle, for the JSON API. */
public record ShuffleSummary(
    ShuffleId id, int locations, int openLocations, int restoredLocations, boolean committing) {}
