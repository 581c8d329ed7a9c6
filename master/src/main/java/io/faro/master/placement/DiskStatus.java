package io.faro.master.placement;

/** A disk's health as its worker last reported it. Only HEALTHY disks get new slots. */
public enum DiskStatus {
  HEALTHY,
  FULL,
  BROKEN
}
