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
}
