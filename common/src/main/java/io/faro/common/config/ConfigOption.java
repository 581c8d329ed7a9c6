package io.faro.common.config;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * One configuration key: its name, type, default, unit, documentation and validator, defined in one
 * place. Options are immutable constants, grouped per module in an options class whose {@code ALL}
 * list feeds the typed module config and the generated docs/configuration.md.
 *
 * @param <T> the parsed type
 */
public final class ConfigOption<T> {
  private final String key;
  private final String defaultText;
  private final String unit;
  private final String doc;
  private final Function<String, T> parser;
  private final Predicate<T> validator;
  private final String allowed;

  private ConfigOption(
      String key,
      String defaultText,
      String unit,
      String doc,
      Function<String, T> parser,
      Predicate<T> validator,
      String allowed) {
    this.key = requireNonNull(key, "key is null");
    this.defaultText = requireNonNull(defaultText, "defaultText is null");
    this.unit = requireNonNull(unit, "unit is null");
    this.doc = requireNonNull(doc, "doc is null");
    this.parser = requireNonNull(parser, "parser is null");
    this.validator = requireNonNull(validator, "validator is null");
    this.allowed = requireNonNull(allowed, "allowed is null");
    // Fail at class-init time if a default does not pass its own validator.
    parse(defaultText);
  }

  public String key() {
    return key;
  }

  public String defaultText() {
    return defaultText;
  }

  public String unit() {
    return unit;
  }

  public String doc() {
    return doc;
  }

  public String allowed() {
    return allowed;
  }

  /** Parses and validates {@code text}; the error names this key and the allowed values. */
  public T parse(String text) {
    T value;
    try {
      value = parser.apply(text.trim());
    } catch (RuntimeException e) {
      throw new ConfigException(
          "Invalid value '" + text + "' for " + key + ": expected " + allowed + detail(e));
    }
    if (!validator.test(value)) {
      throw new ConfigException(
          "Invalid value '" + text + "' for " + key + ": expected " + allowed);
    }
    return value;
  }

  private static String detail(RuntimeException e) {
    return e.getMessage() == null ? "" : " (" + e.getMessage() + ")";
  }

  @Override
  public String toString() {
    return key;
  }

  // ------------------------------------------------------------------ builders

  public static ConfigOption<Integer> intOption(
      String key, int defaultValue, int min, int max, String unit, String doc) {
    return new ConfigOption<>(
        key,
        Integer.toString(defaultValue),
        unit,
        doc,
        Integer::parseInt,
        v -> v >= min && v <= max,
        "an integer in [" + min + ", " + max + "]");
  }

  /** A decimal number in [{@code min}, {@code max}]. */
  public static ConfigOption<Double> doubleOption(
      String key, String defaultValue, double min, double max, String doc) {
    return new ConfigOption<>(
        key,
        defaultValue,
        "",
        doc,
        Double::parseDouble,
        v -> v >= min && v <= max,
        "a number in [" + min + ", " + max + "]");
  }

  public static ConfigOption<Boolean> booleanOption(String key, boolean defaultValue, String doc) {
    return new ConfigOption<>(
        key,
        Boolean.toString(defaultValue),
        "",
        doc,
        ConfigOption::parseBoolean,
        v -> true,
        "true or false");
  }

  public static ConfigOption<String> stringOption(String key, String defaultValue, String doc) {
    return new ConfigOption<>(key, defaultValue, "", doc, s -> s, v -> true, "a string");
  }

  public static ConfigOption<String> nonEmptyStringOption(
      String key, String defaultValue, String doc) {
    return new ConfigOption<>(
        key, defaultValue, "", doc, s -> s, v -> !v.isEmpty(), "a non-empty string");
  }

  /**
   * A size in bytes, written as a number with an optional suffix: b, k, m, g, t (powers of 1024).
   */
  public static ConfigOption<Long> sizeOption(
      String key, String defaultValue, long min, long max, String doc) {
    return new ConfigOption<>(
        key,
        defaultValue,
        "bytes",
        doc,
        ConfigOption::parseSize,
        v -> v >= min && v <= max,
        "a size like 512k, 8m or 1g, between " + formatSize(min) + " and " + formatSize(max));
  }

  /** A duration, written as a number with a unit: ms, s, m, h (a bare number is milliseconds). */
  public static ConfigOption<Duration> durationOption(
      String key, String defaultValue, Duration min, String doc) {
    return new ConfigOption<>(
        key,
        defaultValue,
        "duration",
        doc,
        ConfigOption::parseDuration,
        v -> v.compareTo(min) >= 0,
        "a duration like 500ms, 30s or 5m, at least " + min.toMillis() + "ms");
  }

  public static <E extends Enum<E>> ConfigOption<E> enumOption(
      String key, E defaultValue, Class<E> type, String doc) {
    String names =
        Arrays.stream(type.getEnumConstants())
            .map(e -> e.name().toLowerCase(Locale.ROOT))
            .collect(Collectors.joining(", "));
    return new ConfigOption<>(
        key,
        defaultValue.name().toLowerCase(Locale.ROOT),
        "",
        doc,
        s -> Enum.valueOf(type, s.toUpperCase(Locale.ROOT)),
        v -> true,
        "one of " + names);
  }

  /** A comma-separated list of items, each parsed by {@code item}; empty text is an empty list. */
  public static <T> ConfigOption<List<T>> listOption(
      String key,
      String defaultValue,
      Function<String, T> item,
      boolean allowEmpty,
      String itemDescription,
      String doc) {
    return new ConfigOption<>(
        key,
        defaultValue,
        "",
        doc,
        s ->
            s.isEmpty()
                ? List.of()
                : Arrays.stream(s.split(",")).map(String::trim).map(item).toList(),
        v -> allowEmpty || !v.isEmpty(),
        (allowEmpty ? "" : "a non-empty ") + "comma-separated list of " + itemDescription);
  }

  // ------------------------------------------------------------------ value parsing

  static boolean parseBoolean(String s) {
    return switch (s.toLowerCase(Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default -> throw new IllegalArgumentException("not a boolean");
    };
  }

  public static long parseSize(String s) {
    String t = s.toLowerCase(Locale.ROOT);
    if (t.endsWith("ib")) {
      t = t.substring(0, t.length() - 2);
    } else if (t.endsWith("b") && t.length() > 1 && !Character.isDigit(t.charAt(t.length() - 2))) {
      t = t.substring(0, t.length() - 1);
    }
    long multiplier = 1;
    char last = t.isEmpty() ? ' ' : t.charAt(t.length() - 1);
    switch (last) {
      case 'b' -> t = t.substring(0, t.length() - 1);
      case 'k' -> multiplier = 1L << 10;
      case 'm' -> multiplier = 1L << 20;
      case 'g' -> multiplier = 1L << 30;
      case 't' -> multiplier = 1L << 40;
      default -> {}
    }
    if (multiplier != 1) {
      t = t.substring(0, t.length() - 1);
    }
    return Math.multiplyExact(Long.parseLong(t.trim()), multiplier);
  }

  public static Duration parseDuration(String s) {
    String t = s.toLowerCase(Locale.ROOT).trim();
    if (t.endsWith("ms")) {
      return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2).trim()));
    }
    char last = t.charAt(t.length() - 1);
    String number = t.substring(0, t.length() - 1).trim();
    return switch (last) {
      case 's' -> Duration.ofSeconds(Long.parseLong(number));
      case 'm' -> Duration.ofMinutes(Long.parseLong(number));
      case 'h' -> Duration.ofHours(Long.parseLong(number));
      default -> Duration.ofMillis(Long.parseLong(t));
    };
  }

  /** {@code bytes} as the shortest exact size a setting takes: 150m, 1g, 1000. */
  public static String formatSize(long bytes) {
    String[] units = {"b", "k", "m", "g", "t"};
    int i = 0;
    long v = bytes;
    while (i < units.length - 1 && v >= 1024 && v % 1024 == 0) {
      v /= 1024;
      i++;
    }
    return v + units[i];
  }
}
