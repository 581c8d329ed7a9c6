package io.faro.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.cli.LocalCluster;
import io.faro.common.json.Json;
import io.faro.systemtests.SparkJobRunner;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What an operator's Prometheus and Grafana see: a cluster of real processes (one master, two
 * workers) after a Spark job, every member's {@code /metrics} read by the Prometheus project's own
 * Python parser (prometheus-client from PyPI), the workers' pushed bytes against the bytes the job
 * wrote, and every metric the Grafana dashboard's queries name found in those scrapes.
 */
class DashboardScrapeIT {
  /** The parser the scrapes must satisfy: the Prometheus project's Python client. */
  static final String PROMETHEUS_CLIENT = "prometheus-client==0.26.0";

  private static final Pattern METRIC = Pattern.compile("\\b((?:faro|jvm|process)_[a-z0-9_]+)");
  private static final Pattern EXPR = Pattern.compile("\"expr\": \"((?:[^\"\\\\]|\\\\.)*)\"");

  /** Prints, per file, "FILE path families" then "SAMPLE name value" summed over label sets. */
  private static final String PARSE =
      """
      import sys
      from prometheus_client.parser import text_string_to_metric_families
      for path in sys.argv[1:]:
          with open(path) as f:
              families = list(text_string_to_metric_families(f.read()))
          print("FILE", path, len(families))
          sums = {}
          for family in families:
              for s in family.samples:
                  sums[s.name] = sums.get(s.name, 0.0) + s.value
          for name, value in sorted(sums.items()):
              print("SAMPLE", name, repr(value))
      """;

  @Test
  void everyScrapeParsesAndTheDashboardNamesOnlyWhatTheScrapesHave(@TempDir Path dir)
      throws Exception {
    Path venv =
        PythonVenv.ensure(Path.of(System.getProperty("faro.metrics.venv")), PROMETHEUS_CLIENT);
    Map<String, Path> scrapes = new HashMap<>();
    long jobWrote;
    try (LocalCluster cluster =
        LocalCluster.start(dir.resolve("cluster"), LocalCluster.Options.workers(2))) {
      String result =
          new SparkJobRunner(dir)
              .run("small-blocks", "faro", "0.05", cluster.masterEndpoint(), "job");
      jobWrote = Json.number(result, "shuffle_write_bytes");
      assertThat(jobWrote).as(result).isPositive();
      HttpClient http = HttpClient.newHttpClient();
      for (LocalCluster.Member m : cluster.members()) {
        long port = Json.number(m.ports(), "httpPort");
        assertThat(port).as("%s's httpPort in %s", m.name(), m.ports()).isPositive();
        HttpResponse<String> page =
            http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                    .timeout(Duration.ofSeconds(10))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(page.statusCode()).isEqualTo(200);
        Path file = dir.resolve("scrape-" + m.name() + ".txt");
        Files.writeString(file, page.body());
        scrapes.put(m.role() + ":" + m.name(), file);
      }
    }

    Path script = Files.writeString(dir.resolve("parse.py"), PARSE);
    List<String> command =
        new ArrayList<>(List.of(venv.resolve("bin/python").toString(), script.toString()));
    scrapes.values().forEach(p -> command.add(p.toString()));
    Processes.Result parse = Processes.run(command, dir, Duration.ofMinutes(2));
    String parsed = parse.output();
    assertThat(parse.exitCode()).as("the parser read every scrape:\n%s", parsed).isZero();

    Set<String> names = new TreeSet<>();
    double pushed = 0;
    String file = null;
    for (String line : parsed.split("\n")) {
      String[] f = line.split(" ");
      if (f[0].equals("FILE")) {
        file = f[1];
        assertThat(Integer.parseInt(f[2])).as("families in %s", file).isGreaterThan(20);
      } else if (f[0].equals("SAMPLE")) {
        names.add(f[1]);
        if (f[1].equals("faro_worker_pushed_bytes_total")) {
          pushed += Double.parseDouble(f[2]);
        }
      }
    }
    assertThat(scrapes.keySet()).hasSize(3);
    // Without replicas or retries, the workers took exactly the bytes Spark says the job wrote.
    assertThat(pushed).isEqualTo((double) jobWrote);

    Path grafana = Path.of(System.getProperty("faro.deploy.dir")).resolve("grafana");
    String dashboard = Files.readString(grafana.resolve("faro-dashboard.json"));
    Set<String> used = new TreeSet<>();
    Matcher expr = EXPR.matcher(dashboard);
    while (expr.find()) {
      Matcher metric = METRIC.matcher(expr.group(1));
      while (metric.find()) {
        used.add(metric.group(1));
      }
    }
    assertThat(used).hasSizeGreaterThan(40);
    assertThat(used)
        .as("metrics the dashboard queries that no scrape has")
        .allSatisfy(name -> assertThat(names).contains(name));

    // The dashboard is what its generator writes.
    Path regenerated = dir.resolve("regenerated.json");
    Processes.Result make =
        Processes.run(
            List.of(
                "python3", grafana.resolve("make-dashboard.py").toString(), regenerated.toString()),
            dir,
            Duration.ofMinutes(1));
    assertThat(make.exitCode()).as(make.output()).isZero();
    assertThat(Files.readString(regenerated))
        .as("deploy/grafana/faro-dashboard.json is stale: run deploy/grafana/make-dashboard.py")
        .isEqualTo(dashboard);
  }
}
