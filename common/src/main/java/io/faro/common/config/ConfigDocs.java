package io.faro.common.config;

import java.util.List;
import java.util.Map;

/** Renders option groups as the Markdown of docs/configuration.md. */
public final class ConfigDocs {
  private ConfigDocs() {}

  /** {@code groups} maps a section title to its options, in the order given. */
  public static String render(Map<String, List<ConfigOption<?>>> groups) {
    StringBuilder out = new StringBuilder();
    out.append("# Configuration\n\n")
        .append(
            "Generated from the option classes (`*Options.java`); a test fails when this file\n")
        .append(
            "and the code drift apart. Regenerate with `bin/faro docs > docs/configuration.md`.\n\n")
        .append("Every key can be set in `conf/faro-defaults.conf` (`key value` per line), with\n")
        .append(
            "`--conf FILE` on any `bin/faro` command, or from Spark as `spark.faro.X` for Faro's `faro.X`.\n")
        .append(
            "Sizes take a suffix `k`, `m`, `g` (powers of 1024); durations take `ms`, `s`, `m`, `h`.\n");
    groups.forEach(
        (title, options) -> {
          out.append("\n## ").append(title).append("\n\n");
          out.append("| key | default | allowed | description |\n");
          out.append("|---|---|---|---|\n");
          for (ConfigOption<?> o : options) {
            out.append("| `")
                .append(o.key())
                .append("` | `")
                .append(o.defaultText().isEmpty() ? " " : o.defaultText())
                .append("` | ")
                .append(o.allowed())
                .append(" | ")
                .append(o.doc().replace("|", "\\|").replace("\n", " "))
                .append(" |\n");
          }
        });
    return out.toString();
  }
}
