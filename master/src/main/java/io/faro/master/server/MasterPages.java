package io.faro.master.server;

import io.faro.master.mapping.ProtoMapper;
import io.faro.metrics.HttpEndpoint.Answer;
import io.faro.proto.MasterStatusResponse;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The pages of the master's HTTP port besides {@code /metrics}: {@code /status} answers this
 * master's own view as JSON (the fields of {@code bin/faro admin masters --json}), {@code /} the
 * same as text. Both read only in-memory state, so they answer while the group has no leader.
 */
final class MasterPages {
  private MasterPages() {}

  static Map<String, Supplier<Answer>> of(Supplier<MasterStatusResponse> status) {
    return Map.of(
        "/status", () -> Answer.json(ProtoMapper.statusFields(status.get())),
        "/", () -> Answer.text(text(status.get())));
  }

  private static String text(MasterStatusResponse s) {
    StringBuilder out = new StringBuilder("Faro master ").append(s.getMasterId()).append('\n');
    ProtoMapper.statusFields(s)
        .forEach((key, value) -> out.append(String.format("%-16s %s%n", key, value)));
    return out.append("\nPages: /status (JSON), /metrics (Prometheus)\n").toString();
  }
}
