package io.faro.bench;

import io.faro.bench.workload.DataKind;
import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** {@code compressible} or {@code random}, in any case. */
final class DataConverter implements ITypeConverter<DataKind> {
  @Override
  public DataKind convert(String value) {
    try {
      return DataKind.valueOf(value.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new TypeConversionException("'" + value + "' is not compressible or random");
    }
  }
}
