package io.faro.common.json;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The little JSON Faro writes and reads itself: port files, cluster.json, benchmark reports.
 * Writing handles strings, numbers, booleans, lists and maps (in their iteration order); reading
 * only pulls named numbers and strings out of text Faro wrote, which is all those files need.
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
}
