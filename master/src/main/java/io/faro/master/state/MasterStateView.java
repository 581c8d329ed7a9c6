package io.faro.master.state;

import io.faro.common.admission.AdmissionRules;
import io.faro.common.id.AppId;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import java.util.Collections;
import java.util.Comparator;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * An immutable copy of the whole master state: what a snapshot holds and what cluster status shows.
 * Two views are equal when they hold the same workers, apps, shuffles, admission rules and feature
 * level.
 */
public record MasterStateView(
    SortedMap<WorkerId, RegisteredWorker> workers,
    SortedMap<AppId, RegisteredApp> apps,
    SortedMap<ShuffleId, RegisteredShuffle> shuffles,
    AdmissionRules admission,
    int featureLevel) {

  public static final MasterStateView EMPTY = of(Map.of(), Map.of(), Map.of());

  public MasterStateView {
    workers = copy(workers, MasterState.WORKER_ORDER);
    apps = copy(apps, MasterState.APP_ORDER);
    shuffles = copy(shuffles, MasterState.SHUFFLE_ORDER);
    Objects.requireNonNull(admission, "admission is null");
    if (featureLevel < 1) {
      throw new IllegalArgumentException("a feature level is at least 1, not " + featureLevel);
    }
  }

  /** A view at feature level 1 (a group that never raised it). */
  public MasterStateView(
      SortedMap<WorkerId, RegisteredWorker> workers,
      SortedMap<AppId, RegisteredApp> apps,
      SortedMap<ShuffleId, RegisteredShuffle> shuffles,
      AdmissionRules admission) {
    this(workers, apps, shuffles, admission, 1);
  }

  /** A view of unordered maps, no admission rules; the copy orders them as the state does. */
  public static MasterStateView of(
      Map<WorkerId, RegisteredWorker> workers,
      Map<AppId, RegisteredApp> apps,
      Map<ShuffleId, RegisteredShuffle> shuffles) {
    return of(workers, apps, shuffles, AdmissionRules.NONE);
  }

  /** A view of unordered maps; the copy orders them as the state does. */
  public static MasterStateView of(
      Map<WorkerId, RegisteredWorker> workers,
      Map<AppId, RegisteredApp> apps,
      Map<ShuffleId, RegisteredShuffle> shuffles,
      AdmissionRules admission) {
    return new MasterStateView(
        copy(workers, MasterState.WORKER_ORDER),
        copy(apps, MasterState.APP_ORDER),
        copy(shuffles, MasterState.SHUFFLE_ORDER),
        admission);
  }

  /** Slots held by each worker, over every shuffle. */
  public SortedMap<WorkerId, Integer> slotsPerWorker() {
    SortedMap<WorkerId, Integer> total = new TreeMap<>(MasterState.WORKER_ORDER);
    for (RegisteredShuffle shuffle : shuffles.values()) {
      shuffle.slotsPerWorker().forEach((worker, slots) -> total.merge(worker, slots, Integer::sum));
    }
    return total;
  }

  private static <K, V> SortedMap<K, V> copy(Map<K, V> source, Comparator<? super K> order) {
    SortedMap<K, V> sorted = new TreeMap<>(order);
    sorted.putAll(source);
    return Collections.unmodifiableSortedMap(sorted);
  }
}
