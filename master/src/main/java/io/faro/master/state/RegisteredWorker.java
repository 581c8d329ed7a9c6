package io.faro.master.state;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.WorkerEndpoint;
import io.faro.common.id.WorkerId;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A worker as the replicated state knows it. A lost worker stays known (so that its next heartbeat
 * can be told to register again) but gets no slots; registering again revives it.
 *
 * @param registeredAtMs leader time of the registration that last changed or revived it
 * @param alive false once the worker was declared lost
 * @param admission whether placement may give it new slots; kept across re-registrations
 * @param admissionReason why an operator set the admission; empty for ACTIVE
 */
public record RegisteredWorker(
    WorkerId id,
    WorkerEndpoint endpoint,
    List<DiskSpec> disks,
    long registeredAtMs,
    boolean alive,
    WorkerAdmission admission,
    String admissionReason) {
  public RegisteredWorker {
    requireNonNull(id, "id is null");
    requireNonNull(endpoint, "endpoint is null");
    requireNonNull(admission, "admission is null");
    requireNonNull(admissionReason, "admissionReason is null");
    disks = List.copyOf(disks);
    Set<Integer> indexes = new HashSet<>();
    for (DiskSpec disk : disks) {
      if (!indexes.add(disk.index())) {
        throw new IllegalArgumentException(
            "worker " + id + " declares disk index " + disk.index() + " twice");
      }
    }
  }

  /** An active worker. */
  public RegisteredWorker(
      WorkerId id,
      WorkerEndpoint endpoint,
      List<DiskSpec> disks,
      long registeredAtMs,
      boolean alive) {
    this(id, endpoint, disks, registeredAtMs, alive, WorkerAdmission.ACTIVE, "");
  }

  public RegisteredWorker lost() {
    return new RegisteredWorker(
        id, endpoint, disks, registeredAtMs, false, admission, admissionReason);
  }

  public RegisteredWorker withAdmission(WorkerAdmission newAdmission, String reason) {
    return new RegisteredWorker(
        id,
        endpoint,
        disks,
        registeredAtMs,
        alive,
        newAdmission,
        newAdmission == WorkerAdmission.ACTIVE ? "" : reason);
  }

  /** Alive and admitted: placement may give it new slots. */
  public boolean takesSlots() {
    return alive && admission == WorkerAdmission.ACTIVE;
  }
}
