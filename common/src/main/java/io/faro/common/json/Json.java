package io.faro.common.json;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The little JSON Faro writes and reads itself: port files, cluster.json, benchmark reports, the
 * HTTP API. Writing handles strings, numbers, booleans, lists and maps (in their iteration order).
 * Reading: {@link #parse} reads a whole document into maps, lists, strings, longs, doubles,
 * booleans and nulls (bounded in depth, for answers from a peer); the other readers pull named
 * numbers and strings out of text Faro wrote.
 */
public final class Json {
  private Json() {}

  public static String write(Object value) {
    StringBuilder out = new StringBuilder();
    write(value, out, 0);
    return out.append('\n').toString();
  }

  private static void write(Object value, StringBuilder out, int indent) {
    if (value == null) {
      out.append("null");
    } else if (value instanceof String s) {
      quote(s, out);
    } else if (value instanceof Number || value instanceof Boolean) {
      out.append(value);
    } else if (value instanceof Map<?, ?> map) {
      out.append("{");
      int i = 0;
      for (Map.Entry<?, ?> e : map.entrySet()) {
        out.append(i++ == 0 ? "\n" : ",\n").append("  ".repeat(indent + 1));
        quote(String.valueOf(e.getKey()), out);
        out.append(": ");
        write(e.getValue(), out, indent + 1);
      }
      out.append(map.isEmpty() ? "}" : "\n" + "  ".repeat(indent) + "}");
    } else if (value instanceof List<?> list) {
      out.append("[");
      for (int i = 0; i < list.size(); i++) {
        out.append(i == 0 ? "" : ", ");
        write(list.get(i), out, indent + 1);
      }
      out.append("]");
    } else {
      quote(value.toString(), out);
    }
  }

  private static void quote(String s, StringBuilder out) {
    out.append('"');
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }

  /** The number under {@code key} in a flat object, or -1. */
  public static long number(String json, String key) {
    Matcher m = Pattern.compile("\"" + Pattern.quote(key) + "\"\\s*:\\s*(-?\\d+)").matcher(json);
    return m.find() ? Long.parseLong(m.group(1)) : -1;
  }

  /** The string under {@code key} in a flat object, or null. */
  public static String string(String json, String key) {
    Matcher m =
        Pattern.compile("\"" + Pattern.quote(key) + "\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"")
            .matcher(json);
    return m.find() ? m.group(1).replace("\\\"", "\"").replace("\\\\", "\\") : null;
  }

  /** Every number under {@code key} anywhere in {@code json}. */
  public static List<Long> numbers(String json, String key) {
    Matcher m = Pattern.compile("\"" + Pattern.quote(key) + "\"\\s*:\\s*(-?\\d+)").matcher(json);
    List<Long> out = new ArrayList<>();
    while (m.find()) {
      out.add(Long.parseLong(m.group(1)));
    }
    return out;
  }

  /** Every string under {@code key} anywhere in {@code json}, in order. */
  public static List<String> strings(String json, String key) {
    Matcher m =
        Pattern.compile("\"" + Pattern.quote(key) + "\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"")
            .matcher(json);
    List<String> out = new ArrayList<>();
    while (m.find()) {
      out.add(m.group(1).replace("\\\"", "\"").replace("\\\\", "\\"));
    }
    return out;
  }

  /** Deepest nesting {@link #parse} accepts: far beyond anything Faro writes. */
  static final int MAX_DEPTH = 64;

  /**
   * Reads one JSON document: objects become {@code Map<String, Object>} (in their order), arrays
   * {@code List<Object>}, numbers {@code Long} (integers) or {@code Double}.
   *
   * @throws IllegalArgumentException naming the offset of what is not JSON
   */
  public static Object parse(String json) {
    Reader reader = new Reader(json);
    Object value = reader.value(0);
    reader.skipSpace();
    if (reader.at < json.length()) {
      throw reader.error("text after the document");
    }
    return value;
  }

  private static final class Reader {
    private final String in;
    private int at;

    Reader(String in) {
      this.in = in;
    }

    IllegalArgumentException error(String what) {
      return new IllegalArgumentException("not JSON at offset " + at + ": " + what);
    }

    void skipSpace() {
      while (at < in.length() && Character.isWhitespace(in.charAt(at))) {
        at++;
      }
    }

    Object value(int depth) {
      if (depth > MAX_DEPTH) {
        throw error("nested deeper than " + MAX_DEPTH);
      }
      skipSpace();
      if (at >= in.length()) {
        throw error("the document ends early");
      }
      char c = in.charAt(at);
      switch (c) {
        case '{':
          return object(depth);
        case '[':
          return array(depth);
        case '"':
          return string();
        case 't':
          return word("true", Boolean.TRUE);
        case 'f':
          return word("false", Boolean.FALSE);
        case 'n':
          return word("null", null);
        default:
          return number();
      }
    }

    private Object word(String word, Object value) {
      if (!in.startsWith(word, at)) {
        throw error("expected " + word);
      }
      at += word.length();
      return value;
    }

    private Map<String, Object> object(int depth) {
      Map<String, Object> out = new LinkedHashMap<>();
      at++;
      skipSpace();
      if (at < in.length() && in.charAt(at) == '}') {
        at++;
        return out;
      }
      while (true) {
        skipSpace();
        if (at >= in.length() || in.charAt(at) != '"') {
          throw error("expected a key");
        }
        String key = string();
        skipSpace();
        expect(':');
        out.put(key, value(depth + 1));
        skipSpace();
        if (at < in.length() && in.charAt(at) == ',') {
          at++;
          continue;
        }
        expect('}');
        return out;
      }
    }

    private List<Object> array(int depth) {
      List<Object> out = new ArrayList<>();
      at++;
      skipSpace();
      if (at < in.length() && in.charAt(at) == ']') {
        at++;
        return out;
      }
      while (true) {
        out.add(value(depth + 1));
        skipSpace();
        if (at < in.length() && in.charAt(at) == ',') {
          at++;
          continue;
        }
        expect(']');
        return out;
      }
    }

    private void expect(char c) {
      if (at >= in.length() || in.charAt(at) != c) {
        throw error("expected '" + c + "'");
      }
      at++;
    }

    private String string() {
      at++;
      StringBuilder out = new StringBuilder();
      while (true) {
        if (at >= in.length()) {
          throw error("a string that does not end");
        }
        char c = in.charAt(at++);
        if (c == '"') {
          return out.toString();
        }
        if (c != '\\') {
          out.append(c);
          continue;
        }
        if (at >= in.length()) {
          throw error("a string that does not end");
        }
        char e = in.charAt(at++);
        switch (e) {
          case '"', '\\', '/' -> out.append(e);
          case 'b' -> out.append('\b');
          case 'f' -> out.append('\f');
          case 'n' -> out.append('\n');
          case 'r' -> out.append('\r');
          case 't' -> out.append('\t');
          case 'u' -> {
            if (at + 4 > in.length()) {
              throw error("a short \\u escape");
            }
            try {
              out.append((char) Integer.parseInt(in.substring(at, at + 4), 16));
            } catch (NumberFormatException x) {
              throw error("a bad \\u escape");
            }
            at += 4;
          }
          default -> throw error("a bad escape \\" + e);
        }
      }
    }

    private Object number() {
      int start = at;
      while (at < in.length() && "+-0123456789.eE".indexOf(in.charAt(at)) >= 0) {
        at++;
      }
      String text = in.substring(start, at);
      if (text.isEmpty()) {
        throw error("unexpected '" + in.charAt(start) + "'");
      }
      try {
        if (text.indexOf('.') < 0 && text.indexOf('e') < 0 && text.indexOf('E') < 0) {
          return Long.parseLong(text);
        }
        return Double.parseDouble(text);
      } catch (NumberFormatException e) {
        at = start;
        throw error("a bad number " + text);
      }
    }
  }
}
