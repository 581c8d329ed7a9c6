package io.faro.common.batch;

/**
 * One decoded batch. {@code data[0, length)} holds the records; the array is borrowed from the
 * {@link BatchDecoder} and valid until its next call.
 */
public record Batch(int mapId, int attemptId, int batchId, byte[] data, int length) {}
