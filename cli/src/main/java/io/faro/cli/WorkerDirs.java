package io.faro.cli;

import static java.util.Objects.requireNonNull;

import io.faro.common.config.ConfigOption;
import io.faro.common.id.DiskTier;
import io.faro.worker.WorkerOptions;
import io.faro.worker.storage.DiskDir;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The directories every worker of a local cluster gets, one per simulated disk, from {@code
 * local-cluster --worker-dirs}: a comma-separated list of {@code tier[:capacity][@DIR]}, such as
 * {@code nvme:150m,hdd}. Each item becomes the directory {@code <work-dir>/worker-N/<tier>} (a
 * second item of the same tier {@code <tier>-2}, and so on), or {@code DIR/worker-N/<tier>} when it
 * names a directory (another file system: a disk to measure), given to the worker in {@code
 * faro.worker.dirs} with its tier and capacity. Without {@code @DIR} all the directories of one
 * worker share the work directory's file system, so a capacity is what makes a small disk fill up
 * before the others.
 *
 * @param items the directories, in the order of {@code faro.worker.dirs} (the disk indexes)
 */
public record WorkerDirs(List<Item> items) {
  /** The option that gives them, for error messages. */
  static final String OPTION = "--worker-dirs";

  /**
   * One directory of every worker.
   *
   * @param name its name under the worker's directory
   * @param capacityBytes the most Faro may keep there; {@link Long#MAX_VALUE} for no limit but the
   *     file system's
   * @param base the directory that holds every worker's directory of this item, or null for the
   *     work directory
   */
  public record Item(String name, DiskTier tier, long capacityBytes, Path base) {
    public Item {
      requireNonNull(name, "name is null");
      requireNonNull(tier, "tier is null");
      if (capacityBytes <= 0) {
        throw new IllegalArgumentException("capacity of " + name + " must be positive");
      }
    }

    /** Under the work directory. */
    public Item(String name, DiskTier tier, long capacityBytes) {
      this(name, tier, capacityBytes, null);
    }
  }

  /**
   * Without {@code --worker-dirs}: one directory {@code data} of tier ssd, the layout local
   * clusters always had and that tests and readers of cluster.json rely on.
   */
  public static final WorkerDirs DEFAULT =
      new WorkerDirs(List.of(new Item("data", DiskTier.SSD, Long.MAX_VALUE)));

  public WorkerDirs {
    items = List.copyOf(items);
    if (items.isEmpty()) {
      throw new IllegalArgumentException("a worker needs at least one directory");
    }
  }

  /**
   * Parses a spec such as {@code nvme:150m,hdd}.
   *
   * @throws IllegalArgumentException naming the option, the item at fault and the allowed tiers
   */
  public static WorkerDirs parse(String spec) {
    requireNonNull(spec, "spec is null");
    if (spec.isBlank()) {
      throw bad(spec, "is empty");
    }
    List<Item> items = new ArrayList<>();
    Map<DiskTier, Integer> seen = new EnumMap<>(DiskTier.class);
    for (String item : spec.split(",", -1)) {
      String tierAndCapacity = item.trim();
      Path base = null;
      int at = tierAndCapacity.indexOf('@');
      if (at >= 0) {
        String dir = tierAndCapacity.substring(at + 1).trim();
        if (dir.isEmpty() || !Path.of(dir).isAbsolute()) {
          throw bad(item, "names no absolute directory after @");
        }
        base = Path.of(dir);
        tierAndCapacity = tierAndCapacity.substring(0, at);
      }
      String[] fields = tierAndCapacity.split(":", -1);
      if (fields.length > 2 || fields[0].isBlank()) {
        throw bad(item, "is not tier[:capacity][@DIR]");
      }
      DiskTier tier;
      try {
        tier = DiskTier.parse(fields[0]);
      } catch (IllegalArgumentException e) {
        throw bad(item, "names an unknown tier '" + fields[0].trim() + "'");
      }
      long capacity = Long.MAX_VALUE;
      if (fields.length == 2) {
        try {
          capacity = ConfigOption.parseSize(fields[1].trim());
        } catch (IllegalArgumentException | ArithmeticException e) {
          throw bad(item, "has a capacity '" + fields[1].trim() + "' that is not a size");
        }
        if (capacity <= 0) {
          throw bad(item, "has a capacity that is not positive");
        }
      }
      int n = seen.merge(tier, 1, Integer::sum);
      items.add(new Item(tier.configName() + (n == 1 ? "" : "-" + n), tier, capacity, base));
    }
    return new WorkerDirs(items);
  }

  private static IllegalArgumentException bad(String item, String why) {
    return new IllegalArgumentException(
        OPTION
            + ": '"
            + item.trim()
            + "' "
            + why
            + ": give a comma-separated list of tier[:capacity][@DIR], tier one of "
            + DiskTier.allowed()
            + ", capacity a size like 150m or 2g and DIR an absolute directory, e.g. "
            + OPTION
            + " nvme:150m,hdd");
  }

  /**
   * The disks of the worker whose directory is {@code home} ({@code <work-dir>/worker-N}), in
   * order: under {@code home}, or under {@code DIR/worker-N} for an item with a directory.
   */
  public List<DiskDir> under(Path home) {
    return items.stream()
        .map(
            i ->
                new DiskDir(
                    (i.base() == null ? home : i.base().resolve(home.getFileName().toString()))
                        .resolve(i.name()),
                    i.tier(),
                    i.capacityBytes()))
        .toList();
  }

  /** {@code faro.worker.dirs} for {@code dirs}. */
  static String setting(List<DiskDir> dirs) {
    return WorkerOptions.DIRS.key()
        + "="
        + String.join(",", dirs.stream().map(DiskDir::toString).toList());
  }

  /**
   * The directories a worker was started with: those of the {@code faro.worker.dirs} setting on its
   * command line (the last, as the worker reads them). Empty when it has none.
   */
  static List<Path> startedWith(List<String> command) {
    String prefix = WorkerOptions.DIRS.key() + "=";
    List<Path> dirs = List.of();
    for (String arg : command) {
      if (arg.startsWith(prefix)) {
        dirs =
            WorkerOptions.DIRS.parse(arg.substring(prefix.length())).stream()
                .map(DiskDir::path)
                .toList();
      }
    }
    return dirs;
  }
}
