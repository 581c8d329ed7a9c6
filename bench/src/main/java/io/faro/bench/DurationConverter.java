package io.faro.bench;

import io.faro.common.config.ConfigOption;
import java.time.Duration;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Durations as in Faro's settings ({@link ConfigOption#parseDuration}): 500ms, 90s, 30m, 2h. */
final class DurationConverter implements ITypeConverter<Duration> {
  @Override
  public Duration convert(String value) {
    try {
      return ConfigOption.parseDuration(value);
    } catch (RuntimeException e) {
      throw new TypeConversionException(
          "'" + value + "' is not a duration such as 500ms, 90s or 30m");
    }
  }
}
