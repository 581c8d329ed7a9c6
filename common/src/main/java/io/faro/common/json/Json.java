package io.faro.common.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.PrettyPrinter;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The JSON Faro writes and reads itself: port files, cluster.json, benchmark reports, the HTTP API.
 * A facade over Jackson. Writing handles strings, numbers, booleans, lists and maps (in their
 * iteration order) in one fixed layout. Reading: {@link #parse} reads a whole document into maps,
 * lists, strings, longs, doubles, booleans and nulls (bounded in depth and number length, for
 * answers from a peer); the other readers pull named numbers and strings out of text Faro wrote,
 * fragments of it included.
 */
public final class Json {
  private Json() {}

  /** Deepest nesting of objects and arrays {@link #parse} accepts: far beyond what Faro writes. */
  static final int MAX_DEPTH = 64;

  /** Longest number, in characters, {@link #parse} accepts: a double Java writes has at most 24. */
  static final int MAX_NUMBER_LENGTH = 100;

  /** Longest string value {@link #parse} accepts, in characters (Jackson's own default). */
  static final int MAX_STRING_LENGTH = 20_000_000;

  private static final JsonFactory FACTORY =
      JsonFactory.builder()
          // An error names an offset, never echoes a peer's text back.
          .disable(StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION)
          .streamReadConstraints(
              StreamReadConstraints.builder()
                  .maxNestingDepth(MAX_DEPTH)
                  .maxNumberLength(MAX_NUMBER_LENGTH)
                  .maxStringLength(MAX_STRING_LENGTH)
                  .build())
          .build();

  private static final ObjectMapper MAPPER =
      JsonMapper.builder(FACTORY)
          .enable(DeserializationFeature.USE_LONG_FOR_INTS)
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .build();

  /**
   * {@code value} as JSON text ending in a newline: maps one entry a line, indented by two spaces a
   * level, lists on one line. A non-finite double is written as a string ({@code "NaN"}); a value
   * of any other type as the string of its {@code toString()}.
   */
  public static String write(Object value) {
    StringWriter out = new StringWriter();
    try (JsonGenerator gen = FACTORY.createGenerator(out)) {
      gen.setPrettyPrinter(new Layout());
      write(value, gen);
    } catch (IOException e) {
      throw new UncheckedIOException(e); // a StringWriter does not fail
    }
    return out.append('\n').toString();
  }

  private static void write(Object value, JsonGenerator gen) throws IOException {
    if (value == null) {
      gen.writeNull();
    } else if (value instanceof String s) {
      gen.writeString(s);
    } else if (value instanceof Boolean b) {
      gen.writeBoolean(b);
    } else if (value instanceof Integer
        || value instanceof Long
        || value instanceof Short
        || value instanceof Byte) {
      gen.writeNumber(((Number) value).longValue());
    } else if (value instanceof Double d) {
      gen.writeNumber(d);
    } else if (value instanceof Float f) {
      gen.writeNumber(f);
    } else if (value instanceof BigInteger i) {
      gen.writeNumber(i);
    } else if (value instanceof BigDecimal d) {
      gen.writeNumber(d);
    } else if (value instanceof Number n) {
      gen.writeNumber(n.toString()); // AtomicLong and the like: their digits
    } else if (value instanceof Map<?, ?> map) {
      gen.writeStartObject();
      for (Map.Entry<?, ?> e : map.entrySet()) {
        gen.writeFieldName(String.valueOf(e.getKey()));
        write(e.getValue(), gen);
      }
      gen.writeEndObject();
    } else if (value instanceof List<?> list) {
      gen.writeStartArray();
      for (Object element : list) {
        write(element, gen);
      }
      gen.writeEndArray();
    } else {
      gen.writeString(value.toString());
    }
  }

  /**
   * Faro's layout: {@code {"key": value}} one entry a line, each level two spaces deeper (a list
   * counts as a level), lists as {@code [a, b]} on one line, empty ones as {@code {}} and {@code
   * []}.
   */
  private static final class Layout implements PrettyPrinter {
    private int depth;

    private void newLine(JsonGenerator gen) throws IOException {
      gen.writeRaw('\n');
      for (int i = 0; i < depth; i++) {
        gen.writeRaw("  ");
      }
    }

    @Override
    public void writeRootValueSeparator(JsonGenerator gen) throws IOException {
      gen.writeRaw('\n');
    }

    @Override
    public void writeStartObject(JsonGenerator gen) throws IOException {
      gen.writeRaw('{');
      depth++;
    }

    @Override
    public void beforeObjectEntries(JsonGenerator gen) throws IOException {
      newLine(gen);
    }

    @Override
    public void writeObjectFieldValueSeparator(JsonGenerator gen) throws IOException {
      gen.writeRaw(": ");
    }

    @Override
    public void writeObjectEntrySeparator(JsonGenerator gen) throws IOException {
      gen.writeRaw(',');
      newLine(gen);
    }

    @Override
    public void writeEndObject(JsonGenerator gen, int nrOfEntries) throws IOException {
      depth--;
      if (nrOfEntries > 0) {
        newLine(gen);
      }
      gen.writeRaw('}');
    }

    @Override
    public void writeStartArray(JsonGenerator gen) throws IOException {
      gen.writeRaw('[');
      depth++;
    }

    @Override
    public void beforeArrayValues(JsonGenerator gen) {}

    @Override
    public void writeArrayValueSeparator(JsonGenerator gen) throws IOException {
      gen.writeRaw(", ");
    }

    @Override
    public void writeEndArray(JsonGenerator gen, int nrOfValues) throws IOException {
      depth--;
      gen.writeRaw(']');
    }
  }

  private static Pattern numberField(String key) {
    return Pattern.compile("\"" + Pattern.quote(key) + "\"\\s*:\\s*(-?\\d+)");
  }

  private static Pattern stringField(String key) {
    return Pattern.compile("\"" + Pattern.quote(key) + "\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");
  }

  /** A JSON string's body (between its quotes) with its escapes undone. */
  private static String unescape(String body) {
    if (body.indexOf('\\') < 0) {
      return body;
    }
    try {
      return MAPPER.readValue("\"" + body + "\"", String.class);
    } catch (JsonProcessingException e) {
      // Not JSON's escapes alone: undo the escaped quotes and backslashes, as Faro always did.
      return body.replace("\\\"", "\"").replace("\\\\", "\\");
    }
  }

  /**
   * The integer under {@code key} in a flat object, or -1. Like {@link #numbers} and the string
   * readers it scans the text rather than parsing it, so that it reads fragments and lines too.
   */
  public static long number(String json, String key) {
    Matcher m = numberField(key).matcher(json);
    return m.find() ? Long.parseLong(m.group(1)) : -1;
  }

  /** The string under {@code key} in a flat object, or null. */
  public static String string(String json, String key) {
    Matcher m = stringField(key).matcher(json);
    return m.find() ? unescape(m.group(1)) : null;
  }

  /** Every integer under {@code key} anywhere in {@code json}. */
  public static List<Long> numbers(String json, String key) {
    Matcher m = numberField(key).matcher(json);
    List<Long> out = new ArrayList<>();
    while (m.find()) {
      out.add(Long.parseLong(m.group(1)));
    }
    return out;
  }

  /** Every string under {@code key} anywhere in {@code json}, in order. */
  public static List<String> strings(String json, String key) {
    Matcher m = stringField(key).matcher(json);
    List<String> out = new ArrayList<>();
    while (m.find()) {
      out.add(unescape(m.group(1)));
    }
    return out;
  }

  /**
   * Reads one JSON document: objects become {@code Map<String, Object>} (in their order), arrays
   * {@code List<Object>}, numbers {@code Long} (integers) or {@code Double}. Refuses nesting deeper
   * than {@link #MAX_DEPTH}, numbers longer than {@link #MAX_NUMBER_LENGTH} characters, integers
   * beyond a long (Jackson refuses those) and strings longer than {@link #MAX_STRING_LENGTH}.
   *
   * @throws IllegalArgumentException naming the offset of what is not JSON
   */
  public static Object parse(String json) {
    try (JsonParser parser = MAPPER.createParser(json)) {
      try {
        return MAPPER.readValue(parser, Object.class);
      } catch (StreamConstraintsException e) {
        String what = e.getOriginalMessage();
        throw notJson(
            offset(e, parser),
            what.toLowerCase(Locale.ROOT).contains("depth")
                ? "nested deeper than " + MAX_DEPTH
                : "beyond a limit: " + what);
      } catch (JsonProcessingException e) {
        throw notJson(offset(e, parser), e.getOriginalMessage());
      }
    } catch (IOException e) {
      throw new IllegalArgumentException("not JSON at offset 0: " + e.getMessage(), e);
    }
  }

  /** Where Jackson saw the error, else where its parser stopped. */
  private static long offset(JsonProcessingException e, JsonParser parser) {
    JsonLocation at = e.getLocation();
    if (at == null || at.getCharOffset() < 0) {
      at = parser.currentLocation();
    }
    return Math.max(0, at.getCharOffset());
  }

  private static IllegalArgumentException notJson(long offset, String what) {
    return new IllegalArgumentException("not JSON at offset " + offset + ": " + what);
  }
}
