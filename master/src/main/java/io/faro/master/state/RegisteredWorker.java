package io.faro.master.state;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.WorkerEndpoint;
import io.faro.common.id.WorkerId;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A worker as the replicated state knows it. A lost worker stays known (so that its next
 * heartbeat can be told to register again) but gets no slots; registering again revives it.
 *
 * @param registeredAtMs leader time of the registration that last changed or revived it
 * @param alive false once the worker was declared lost
 */
public record RegisteredWorker(
    WorkerId id, WorkerEndpoint endpoint, List<DiskSpec> disks, long registeredAtMs, boolean alive) {
  public RegisteredWorker {
    requireNonNull(id, "id is null");
    requireNonNull(endpoint, "endpoint is null");
    disks = List.copyOf(disks);
    Set<Integer> indexes = new HashSet<>();
    for (DiskSpec disk : disks) {
      if (!indexes.add(disk.index())) {
        throw new IllegalArgumentException(
            "worker " + id + " declares disk index " + disk.index() + " twice");
      }
    }
  }

  public RegisteredWorker lost() {
    return new RegisteredWorker(id, endpoint, disks, registeredAtMs, false);
  }
}
