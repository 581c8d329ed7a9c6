package io.faro.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HttpEndpointTest {
  private final HttpClient http = HttpClient.newHttpClient();

  private HttpResponse<String> send(HttpEndpoint endpoint, String method, String path)
      throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + endpoint.port() + path))
            .method(method, HttpRequest.BodyPublishers.noBody())
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void servesMetricsPagesAndJson404() throws Exception {
    FaroMetrics metrics = FaroMetrics.standalone();
    metrics.counter("faro_worker_pushed_bytes", "Pushed.").inc(42);
    try (HttpEndpoint endpoint =
        new HttpEndpoint(
            "127.0.0.1",
            0,
            "test-http",
            metrics,
            Map.of(
                "/api/v1/memory",
                HttpEndpoint.Page.of(() -> HttpEndpoint.Answer.json(Map.of("used", 3))),
                "/api/v1/echo",
                query -> {
                  if (query.containsKey("bad")) {
                    throw new HttpEndpoint.BadRequest("bad is bad");
                  }
                  return HttpEndpoint.Answer.json(query);
                },
                "/api/v1/broken",
                query -> {
                  throw new IllegalStateException("no state");
                }))) {
      HttpResponse<String> scrape = send(endpoint, "GET", "/metrics");
      assertThat(scrape.statusCode()).isEqualTo(200);
      assertThat(scrape.headers().firstValue("Content-Type"))
          .hasValue(FaroMetrics.textContentType());
      assertThat(scrape.body()).contains("faro_worker_pushed_bytes_total 42.0");

      HttpResponse<String> page = send(endpoint, "GET", "/api/v1/memory/");
      assertThat(page.statusCode()).isEqualTo(200);
      assertThat(page.body()).contains("\"used\": 3");

      HttpResponse<String> echo = send(endpoint, "GET", "/api/v1/echo?after=a%2Fb&limit=5");
      assertThat(echo.body()).contains("\"after\": \"a/b\"").contains("\"limit\": \"5\"");
      HttpResponse<String> bad = send(endpoint, "GET", "/api/v1/echo?bad=1");
      assertThat(bad.statusCode()).isEqualTo(400);
      assertThat(bad.body()).contains("bad is bad");
      assertThat(send(endpoint, "GET", "/api/v1/echo?" + "a=1&".repeat(17)).statusCode())
          .isEqualTo(400);

      HttpResponse<String> missing = send(endpoint, "GET", "/api/v2/nothing");
      assertThat(missing.statusCode()).isEqualTo(404);
      assertThat(missing.headers().firstValue("Content-Type")).hasValue("application/json");
      assertThat(missing.body()).contains("no page /api/v2/nothing").contains("/api/v1/memory");

      HttpResponse<String> broken = send(endpoint, "GET", "/api/v1/broken");
      assertThat(broken.statusCode()).isEqualTo(500);
      assertThat(broken.body()).contains("no state");

      assertThat(send(endpoint, "POST", "/metrics").statusCode()).isEqualTo(405);
      HttpResponse<String> head = send(endpoint, "HEAD", "/metrics");
      assertThat(head.statusCode()).isEqualTo(200);
      assertThat(head.body()).isEmpty();
    }
  }

  /**
   * With authentication on, the pages that name applications need the admin token; the others stay
   * open, and a process without an admin secret serves those pages to nobody.
   */
  @Test
  void theOperatorsPagesNeedTheAdminTokenAndTheRestStaysOpen() throws Exception {
    io.faro.common.auth.Secret admin =
        io.faro.common.auth.Secret.of("admin-secret-0123456789abcdef");
    String token = io.faro.common.auth.AdminTokens.http(admin);
    Map<String, HttpEndpoint.Page> pages =
        Map.of(
            "/api/v1/apps",
            HttpEndpoint.Page.of(() -> HttpEndpoint.Answer.json(Map.of("apps", "app-1"))),
            "/api/v1/memory",
            HttpEndpoint.Page.of(() -> HttpEndpoint.Answer.json(Map.of("used", 3))));
    try (HttpEndpoint endpoint =
            new HttpEndpoint(
                "127.0.0.1",
                0,
                "test-http",
                FaroMetrics.standalone(),
                pages,
                new HttpEndpoint.Admin(
                    java.util.Set.of("/api/v1/apps"), true, java.util.Optional.of(token)));
        HttpEndpoint noSecret =
            new HttpEndpoint(
                "127.0.0.1",
                0,
                "test-http-2",
                FaroMetrics.standalone(),
                pages,
                new HttpEndpoint.Admin(
                    java.util.Set.of("/api/v1/apps"), true, java.util.Optional.empty()))) {
      HttpResponse<String> refused = send(endpoint, "GET", "/api/v1/apps");
      assertThat(refused.statusCode()).isEqualTo(401);
      assertThat(refused.body()).contains("admin token").doesNotContain("app-1");
      assertThat(send(endpoint, "GET", "/metrics").statusCode()).isEqualTo(200);
      assertThat(send(endpoint, "GET", "/api/v1/memory").statusCode()).isEqualTo(200);

      for (String wrong : java.util.List.of("Bearer " + token + "0", "Basic " + token, token)) {
        HttpResponse<String> guessed =
            http.send(
                HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + endpoint.port() + "/api/v1/apps"))
                    .header("Authorization", wrong)
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(guessed.statusCode()).as(wrong).isEqualTo(401);
      }
      HttpResponse<String> operator =
          http.send(
              HttpRequest.newBuilder(
                      URI.create("http://127.0.0.1:" + endpoint.port() + "/api/v1/apps/"))
                  .header("Authorization", "Bearer " + token)
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(operator.statusCode()).isEqualTo(200);
      assertThat(operator.body()).contains("app-1");

      HttpResponse<String> nobody = send(noSecret, "GET", "/api/v1/apps");
      assertThat(nobody.statusCode()).isEqualTo(403);
      assertThat(nobody.body()).contains("faro.auth.admin.secret.file");
    }
  }

  @Test
  void clientsThatSendHalfARequestCannotTakeThePort() throws Exception {
    FaroMetrics metrics = FaroMetrics.standalone();
    metrics.counter("faro_worker_pushed_bytes", "Pushed.").inc(1);
    try (HttpEndpoint endpoint = new HttpEndpoint("127.0.0.1", 0, "test-http", metrics, Map.of())) {
      java.util.List<java.net.Socket> stuck = new java.util.ArrayList<>();
      try {
        // More half-sent requests than the port has threads: each pins a thread while it reads.
        for (int i = 0; i < HttpEndpoint.THREADS + 1; i++) {
          java.net.Socket s = new java.net.Socket("127.0.0.1", endpoint.port());
          s.getOutputStream().write("GET /metrics HTTP/1.1\r\nHost: x\r\n".getBytes());
          s.getOutputStream().flush();
          stuck.add(s);
        }
        // The port shows nothing of which connections its threads read: give them the time to
        // take the half-sent requests first. Too short a pause only makes the test easier.
        Thread.sleep(200);
        long start = System.nanoTime();
        HttpResponse<String> scrape =
            http.send(
                HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + endpoint.port() + "/metrics"))
                    .timeout(java.time.Duration.ofSeconds(20))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(scrape.statusCode()).isEqualTo(200);
        // The build sets sun.net.httpserver.maxReqTime to 2 s for this JVM (10 s by default).
        assertThat(java.time.Duration.ofNanos(System.nanoTime() - start))
            .isLessThan(java.time.Duration.ofSeconds(10));
      } finally {
        for (java.net.Socket s : stuck) {
          s.close();
        }
      }
    }
  }
}
