package io.faro.worker.partition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.id.AppId;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class IdleLocationsTest {
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("app-idle"), 3);

  @Test
  void keepsWhatEachLocationWasReservedAsUntilItsFirstPartTakesIt() {
    IdleLocations idle = new IdleLocations();
    idle.add(7, 0, 1, IdleLocations.Idle.NO_LINK, false);
    idle.add(7, 2, 0, 4, false);
    idle.add(9, 0, 3, IdleLocations.Idle.NO_LINK, true);
    // Idempotent: a location held stays as it was reserved.
    idle.add(7, 0, 2, 5, true);

    assertThat(idle.size()).isEqualTo(3);
    assertThat(idle.get(7, 0)).isEqualTo(new IdleLocations.Idle(1, -1, false, false));
    assertThat(idle.get(7, 2)).isEqualTo(new IdleLocations.Idle(0, 4, false, false));
    assertThat(idle.get(9, 0)).isEqualTo(new IdleLocations.Idle(3, -1, true, false));
    assertThat(idle.get(7, 1)).isNull();

    assertThat(idle.take(7, 2)).isEqualTo(new IdleLocations.Idle(0, 4, false, false));
    assertThat(idle.take(7, 2)).isNull();
    assertThat(idle.contains(7, 2)).isFalse();
    assertThat(idle.size()).isEqualTo(2);
    LocationKeys keys = idle.keys();
    assertThat(keys.size()).isEqualTo(2);
    assertThat(keys.toArray())
        .containsExactly(
            LocationKeys.key(new PartitionKey(SHUFFLE, 7, 0)),
            LocationKeys.key(new PartitionKey(SHUFFLE, 9, 0)));
  }

  @Test
  void countsTheOpenOnesByDiskAndSealingClosesThemAll() {
    IdleLocations idle = new IdleLocations();
    for (int p = 0; p < 10; p++) {
      idle.add(p, 0, p % 3, IdleLocations.Idle.NO_LINK, false);
    }
    idle.take(0, 0);
    int[] byDisk = new int[3];
    idle.countOpenByDisk(byDisk);
    assertThat(byDisk).containsExactly(3, 3, 3);
    assertThat(idle.open()).isEqualTo(9);

    idle.sealAll();
    assertThat(idle.get(4, 0).sealed()).isTrue();
    int[] after = new int[3];
    idle.countOpenByDisk(after);
    assertThat(after).containsExactly(0, 0, 0);
    assertThat(idle.size()).isEqualTo(9);
    // Taking a sealed one does not count it out twice.
    idle.take(4, 0);
    idle.add(20, 0, 1, IdleLocations.Idle.NO_LINK, false);
    idle.countOpenByDisk(after);
    assertThat(after).containsExactly(0, 1, 0);
  }

  @Test
  void agreesWithAHashMapOverManyAddsAndTakesThatCollide() {
    IdleLocations idle = new IdleLocations();
    Map<Long, IdleLocations.Idle> model = new HashMap<>();
    Random random = new Random(42);
    List<long[]> held = new ArrayList<>();
    for (int step = 0; step < 200_000; step++) {
      // Few distinct partitions and epochs, so that probe runs are long and removals shift them.
      int partition = random.nextInt(5_000);
      int epoch = random.nextInt(3);
      long key = ((long) partition << 32) | epoch;
      if (random.nextInt(3) == 0) {
        IdleLocations.Idle expected = model.remove(key);
        assertThat(idle.take(partition, epoch)).isEqualTo(expected);
      } else {
        int disk = random.nextInt(8);
        int link = random.nextInt(4) - 1;
        boolean replicaCopy = link < 0 && random.nextBoolean();
        idle.add(partition, epoch, disk, link, replicaCopy);
        model.putIfAbsent(key, new IdleLocations.Idle(disk, link, replicaCopy, false));
        held.add(new long[] {partition, epoch});
      }
      assertThat(idle.size()).isEqualTo(model.size());
    }
    for (long[] k : held) {
      long key = (k[0] << 32) | k[1];
      assertThat(idle.get((int) k[0], (int) k[1])).isEqualTo(model.get(key));
    }
    Map<Long, IdleLocations.Idle> visited = new HashMap<>();
    for (long k : idle.keys().toArray()) {
      visited.put(k, idle.get(LocationKeys.partition(k), LocationKeys.epoch(k)));
    }
    assertThat(visited).isEqualTo(model);
  }

  @Test
  void refusesWhatItCannotHold() {
    IdleLocations idle = new IdleLocations();
    assertThatThrownBy(() -> idle.add(-1, 0, 0, -1, false))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> idle.add(0, 0, 1 << 14, -1, false))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> idle.add(0, 0, 0, IdleLocations.MAX_LINKS, false))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(idle.size()).isZero();
  }
}
