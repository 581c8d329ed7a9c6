package io.faro.bench;

import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** {@code lz4} or {@code none}, in any case. */
final class CodecConverter implements ITypeConverter<Codec> {
  @Override
  public Codec convert(String value) {
    try {
      return Codec.valueOf(value.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new TypeConversionException("'" + value + "' is not lz4 or none");
    }
  }
}
