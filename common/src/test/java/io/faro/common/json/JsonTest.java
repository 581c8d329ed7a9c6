package io.faro.common.json;

import static org.assertj.core.api.Assertions.assertThat;

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
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> Json.parse(bad))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("not JSON at offset");
    }
    String deep = "[".repeat(Json.MAX_DEPTH + 2) + "]".repeat(Json.MAX_DEPTH + 2);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> Json.parse(deep))
        .hasMessageContaining("nested deeper");
  }
}
