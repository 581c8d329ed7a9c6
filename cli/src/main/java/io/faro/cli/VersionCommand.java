package io.faro.cli;

import io.faro.common.json.Json;
import io.faro.common.version.Compatibility;
import io.faro.common.version.FeatureLevel;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bin/faro version}: this release and what it is compatible with, for operators and for the
 * tools that roll a cluster to it ({@code local-cluster upgrade} reads {@code --json} from the
 * distribution it rolls to).
 */
@Command(
    name = "version",
    mixinStandardHelpOptions = true,
    description = {
      "Prints this release, the wire protocols it speaks and answers, and the cluster feature"
          + " levels it supports (docs/upgrading.md)."
    })
final class VersionCommand implements Callable<Integer> {
  @Option(names = "--json", description = "Print one JSON object.")
  boolean json;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /** What {@code --json} prints. */
  static Map<String, Object> fields() {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("release", Compatibility.release());
    out.put("protocol", Compatibility.PROTOCOL);
    out.put("oldest_protocol", Compatibility.OLDEST_PROTOCOL);
    out.put("min_feature_level", FeatureLevel.MIN);
    out.put("max_feature_level", FeatureLevel.MAX);
    return out;
  }

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    if (json) {
      out.println(Json.write(fields()));
    } else {
      out.println("faro " + Compatibility.release());
      out.println(
          "wire protocol "
              + Compatibility.PROTOCOL
              + " (answers "
              + Compatibility.OLDEST_PROTOCOL
              + " to "
              + Compatibility.PROTOCOL
              + ")");
      out.println("cluster feature levels " + FeatureLevel.MIN + " to " + FeatureLevel.MAX);
    }
    out.flush();
    return 0;
  }
}
