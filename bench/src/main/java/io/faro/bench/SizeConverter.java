package io.faro.bench;

import io.faro.common.config.ConfigOption;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Sizes as in Faro's settings ({@link ConfigOption#parseSize}): 100, 64k, 512m, 4g. */
public final class SizeConverter implements ITypeConverter<Long> {
  @Override
  public Long convert(String value) {
    try {
      long size = ConfigOption.parseSize(value);
      if (size < 0) {
        throw new TypeConversionException("'" + value + "' is negative");
      }
      return size;
    } catch (NumberFormatException | ArithmeticException e) {
      throw new TypeConversionException(
          "'" + value + "' is not a size such as 100, 64k, 512m or 4g");
    }
  }
}
