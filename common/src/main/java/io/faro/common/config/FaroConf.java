package io.faro.common.config;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;

/**
 * The raw settings of one process: {@code faro.*} keys to text. Immutable. Typed access goes
 * through {@link ConfigOption}, which parses, validates and names the key in its errors.
 *
 * <p>Files use the {@code java.util.Properties} syntax, so both {@code key value} (as in
 * spark-defaults.conf) and {@code key=value} work; {@code #} starts a comment.
 */
public final class FaroConf {
  private final Map<String, String> values;

  private FaroConf(Map<String, String> values) {
    this.values = Collections.unmodifiableMap(new TreeMap<>(values));
  }

  public static FaroConf empty() {
    return new FaroConf(Map.of());
  }

  public static FaroConf of(Map<String, String> values) {
    return new FaroConf(requireNonNull(values, "values is null"));
  }

  /** Reads a properties file; a missing file is an error that names the path. */
  public static FaroConf load(Path file) {
    Properties properties = new Properties();
    try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      properties.load(reader);
    } catch (IOException e) {
      throw new ConfigException("Cannot read config file " + file + ": " + e);
    }
    Map<String, String> map = new TreeMap<>();
    properties.stringPropertyNames().forEach(k -> map.put(k, properties.getProperty(k).trim()));
    return new FaroConf(map);
  }

  /** A copy with {@code key} set to {@code value}. */
  public FaroConf with(String key, String value) {
    Map<String, String> copy = new TreeMap<>(values);
    copy.put(requireNonNull(key, "key is null"), requireNonNull(value, "value is null"));
    return new FaroConf(copy);
  }

  public FaroConf with(ConfigOption<?> option, String value) {
    option.parse(value);
    return with(option.key(), value);
  }

  /** A copy where every setting of {@code overrides} replaces this one's. */
  public FaroConf withAll(FaroConf overrides) {
    Map<String, String> copy = new TreeMap<>(values);
    copy.putAll(overrides.values);
    return new FaroConf(copy);
  }

  public <T> T get(ConfigOption<T> option) {
    String text = values.get(option.key());
    return option.parse(text == null ? option.defaultText() : text);
  }

  public Optional<String> raw(String key) {
    return Optional.ofNullable(values.get(key));
  }

  public Map<String, String> asMap() {
    return values;
  }

  @Override
  public String toString() {
    return "FaroConf" + values;
  }
}
