package io.faro.client.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One scrape of a {@code /metrics} page, read the way Prometheus reads the text format: every
 * sample line {@code name{labels} value}, every family announced by {@code # TYPE} before its
 * samples, no sample twice.
 */
public final class Scrape {
  private static final Pattern SAMPLE =
      Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[^}]*})? (\\S+)");
  private final Map<String, Double> samples;

  private Scrape(Map<String, Double> samples) {
    this.samples = samples;
  }

  public static Scrape of(int port) throws IOException, InterruptedException {
    HttpResponse<String> response = get(port, "/metrics");
    assertThat(response.statusCode()).isEqualTo(200);
    return parse(response.body());
  }

  /** A GET of {@code path} on 127.0.0.1:{@code port}. */
  public static HttpResponse<String> get(int port, String path)
      throws IOException, InterruptedException {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10))
                .build(),
            HttpResponse.BodyHandlers.ofString());
  }

  /** A GET of {@code path} with {@code Authorization: Bearer token} (an operator's page). */
  public static HttpResponse<String> get(int port, String path, String token)
      throws IOException, InterruptedException {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10))
                .header("Authorization", "Bearer " + token)
                .build(),
            HttpResponse.BodyHandlers.ofString());
  }

  static Scrape parse(String text) {
    Map<String, Double> samples = new LinkedHashMap<>();
    java.util.Set<String> typed = new java.util.HashSet<>();
    for (String line : text.split("\n")) {
      if (line.startsWith("# TYPE ")) {
        typed.add(line.split(" ")[2]);
        continue;
      }
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      Matcher m = SAMPLE.matcher(line);
      assertThat(m.matches()).as("a sample line: %s", line).isTrue();
      String name = m.group(1);
      assertThat(
              typed.contains(name)
                  || typed.contains(name.replaceFirst("_(total|count|sum|created)$", ""))
                  || typed.contains(name.replaceFirst("_total$", "")))
          .as("%s is announced by # TYPE before its samples", name)
          .isTrue();
      String series = name + (m.group(2) == null ? "" : m.group(2));
      assertThat(samples.put(series, Double.parseDouble(m.group(3))))
          .as("%s appears once", series)
          .isNull();
    }
    return new Scrape(samples);
  }

  /** The value of one series, e.g. {@code faro_worker_requests_total{port="push",type="push"}}. */
  public double value(String series) {
    Double v = samples.get(series);
    assertThat(v).as("series %s in the scrape", series).isNotNull();
    return v;
  }

  /** The sum of every series of {@code name} whose labels contain {@code labels} (may be ""). */
  public double sum(String name, String labels) {
    return samples.entrySet().stream()
        .filter(
            e ->
                (e.getKey().equals(name) || e.getKey().startsWith(name + "{"))
                    && e.getKey().contains(labels))
        .mapToDouble(Map.Entry::getValue)
        .sum();
  }

  public boolean has(String series) {
    return samples.containsKey(series);
  }
}
