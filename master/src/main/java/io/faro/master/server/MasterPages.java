package io.faro.master.server;

import io.faro.master.service.StatusFields;
import io.faro.metrics.HttpEndpoint;
import io.faro.metrics.HttpEndpoint.Answer;
import io.faro.proto.MasterStatusResponse;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The pages of the master's HTTP port besides {@code /metrics}: {@code /status} answers this
 * master's own view as JSON (the fields of {@code bin/faro admin masters --json}), {@code /} the
 * same as text. Both read only in-memory state, so they answer while the group has no leader.
 */
final class MasterPages {
  private MasterPages() {}

  static Map<String, HttpEndpoint.Page> of(
      Supplier<MasterStatusResponse> status, Map<String, HttpEndpoint.Page> api) {
    Map<String, HttpEndpoint.Page> pages = new LinkedHashMap<>(api);
    pages.put(
        "/status", HttpEndpoint.Page.of(() -> Answer.json(StatusFields.master(status.get()))));
    List<String> listed = new ArrayList<>(pages.keySet());
    listed.add("/metrics");
    Collections.sort(listed);
    pages.put("/", HttpEndpoint.Page.of(() -> Answer.text(text(status.get(), listed))));
    return pages;
  }

  private static String text(MasterStatusResponse s, List<String> pages) {
    StringBuilder out = new StringBuilder("Faro master ").append(s.getMasterId()).append('\n');
    StatusFields.master(s)
        .forEach((key, value) -> out.append(String.format("%-16s %s%n", key, value)));
    return out.append("\nPages: ").append(String.join(", ", pages)).append('\n').toString();
  }
}
