package io.faro.client;

/**
 * One attempt of one map task: {@code mapId} is the map's index within its shuffle, {@code
 * attemptId} tells apart the attempts of that map (a retry, a speculative copy, a stage re-run).
 * Each batch a pusher cuts carries both; the driver keeps one winning attempt per map.
 */
public record MapAttempt(int mapId, int attemptId) {
  public MapAttempt {
    if (mapId < 0) {
      throw new IllegalArgumentException("negative map id " + mapId);
    }
    if (attemptId < 0) {
      throw new IllegalArgumentException("negative attempt id " + attemptId + " of map " + mapId);
    }
  }

  @Override
  public String toString() {
    return "map " + mapId + " attempt " + attemptId;
  }
}
