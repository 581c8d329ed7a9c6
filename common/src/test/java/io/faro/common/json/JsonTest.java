package io.faro.common.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {
  @Test
  void escapesStrings() {
    assertThat(Json.write("a\"b\\c\n\r\t\u0001")).isEqualTo("\"a\\\"b\\\\c\\n\\r\\t\\u0001\"\n");
  }

  @Test
  void writesNestedValuesAndReadsBackFlatFields() {
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("role", "worker \"one\"");
    doc.put("pid", 42L);
    doc.put("ok", true);
    doc.put("dirs", List.of("/a", "/b"));
    doc.put("inner", Map.of("pid", 7));
    String json = Json.write(doc);
    assertThat(json).startsWith("{\n  \"role\": \"worker \\\"one\\\"\",\n  \"pid\": 42,");
    assertThat(Json.string(json, "role")).isEqualTo("worker \"one\"");
    assertThat(Json.number(json, "pid")).isEqualTo(42);
    assertThat(Json.numbers(json, "pid")).containsExactly(42L, 7L);
    assertThat(Json.number(json, "missing")).isEqualTo(-1);
    assertThat(json).contains("\"dirs\": [\"/a\", \"/b\"]");
  }

  @Test
  void parsesWhatItWritesBack() {
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("s", "a\"b\\c\n\u0001é");
    doc.put("n", -42L);
    doc.put("d", 1.5);
    doc.put("t", true);
    doc.put("f", false);
    doc.put("z", null);
    doc.put("list", List.of(1L, "x", List.of(), Map.of()));
    doc.put("inner", Map.of("k", List.of(Map.of("id", "w1"))));
    assertThat(Json.parse(Json.write(doc))).isEqualTo(doc);
    assertThat(Json.parse(" [1e3, \"\\u0041\\/\"] ")).isEqualTo(List.of(1000.0, "A/"));
  }

  @Test
  void refusesWhatIsNotJsonNamingWhere() {
    for (String bad :
        List.of("", "{", "{\"a\" 1}", "[1,]", "tru", "\"open", "{} x", "[\"\\q\"]", "-")) {
      assertThatThrownBy(() -> Json.parse(bad))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("not JSON at offset");
    }
    String deep = "[".repeat(Json.MAX_DEPTH + 2) + "]".repeat(Json.MAX_DEPTH + 2);
    assertThatThrownBy(() -> Json.parse(deep)).hasMessageContaining("nested deeper");
  }

  @Test
  void writesFaroLayoutForNestedMapsAndLists() {
    // A list counts as a level: the entries of a map in a list sit two levels deeper.
    Map<String, Object> inner = new LinkedHashMap<>();
    inner.put("id", "w1");
    inner.put("slots", List.of(1, 2));
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("workers", List.of(inner, Map.of()));
    doc.put("empty", List.of());
    doc.put("ratio", 0.25);
    assertThat(Json.write(doc))
        .isEqualTo(
            "{\n"
                + "  \"workers\": [{\n"
                + "      \"id\": \"w1\",\n"
                + "      \"slots\": [1, 2]\n"
                + "    }, {}],\n"
                + "  \"empty\": [],\n"
                + "  \"ratio\": 0.25\n"
                + "}\n");
    assertThat(Json.write(Map.of())).isEqualTo("{}\n");
  }

  @Test
  void writesNonFiniteDoublesAsStringsSoTheDocumentStaysJson() {
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("nan", Double.NaN);
    doc.put("inf", Double.POSITIVE_INFINITY);
    String json = Json.write(doc);
    assertThat(json).isEqualTo("{\n  \"nan\": \"NaN\",\n  \"inf\": \"Infinity\"\n}\n");
    assertThat(Json.parse(json)).isEqualTo(Map.of("nan", "NaN", "inf", "Infinity"));
  }

  @Test
  void readsIntegersAsLongsAndDecimalsAsDoubles() {
    assertThat(Json.parse("[1, -2, 9223372036854775807, 1.5, 2e0]"))
        .isEqualTo(List.of(1L, -2L, Long.MAX_VALUE, 1.5, 2.0));
  }

  @Test
  void stringReadersUndoEscapesAndReadFragments() {
    String json = Json.write(Map.of("log", "a\\b \"c\"\n\u00e9"));
    assertThat(Json.string(json, "log")).isEqualTo("a\\b \"c\"\n\u00e9");
    assertThat(Json.strings("\"id\": \"x\", \"id\": \"y\"", "id")).containsExactly("x", "y");
    assertThat(Json.number("junk \"port\": 7 and more", "port")).isEqualTo(7);
  }

  @Test
  void refusesHostileInputWithinTheLimits() {
    String deepest = "[".repeat(Json.MAX_DEPTH) + "1" + "]".repeat(Json.MAX_DEPTH);
    assertThat(Json.parse(deepest)).isInstanceOf(List.class);
    String tooDeep = "{\"a\":".repeat(Json.MAX_DEPTH + 1) + "1" + "}".repeat(Json.MAX_DEPTH + 1);
    assertThatThrownBy(() -> Json.parse(tooDeep))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not JSON at offset")
        .hasMessageContaining("nested deeper than " + Json.MAX_DEPTH);
    // Far deeper than any stack allows a recursive reader: refused, not a StackOverflowError.
    String abyss = "[".repeat(1_000_000);
    assertThatThrownBy(() -> Json.parse(abyss))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("nested deeper");
    String longNumber = "[" + "9".repeat(Json.MAX_NUMBER_LENGTH + 1) + "]";
    assertThatThrownBy(() -> Json.parse(longNumber))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not JSON at offset");
    String longDecimal = "[0." + "1".repeat(Json.MAX_NUMBER_LENGTH + 1) + "]";
    assertThatThrownBy(() -> Json.parse(longDecimal))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not JSON at offset");
    assertThatThrownBy(() -> Json.parse("{\"n\": 92233720368547758070}"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not JSON at offset")
        .hasMessageContaining("out of range of long");
    String longString = "\"" + "x".repeat(Json.MAX_STRING_LENGTH + 1) + "\"";
    assertThatThrownBy(() -> Json.parse(longString))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("beyond a limit");
  }
}
