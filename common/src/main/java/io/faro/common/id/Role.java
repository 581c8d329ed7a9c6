package io.faro.common.id;

/** Which copy of a partition a location holds. */
public enum Role {
  PRIMARY,
  REPLICA
}
