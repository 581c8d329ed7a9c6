package io.faro.metrics;

import static java.util.Objects.requireNonNull;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.faro.common.auth.AdminTokens;
import io.faro.common.auth.AuthSettings;
import io.faro.common.json.Json;
import io.faro.common.network.BindFailures;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP port of a master or a worker, for operators, scrapers and load balancers: {@code
 * /metrics} (Prometheus text format) and whatever pages the process adds, each an exact path
 * answered with GET or HEAD. An unknown path gets 404 and a JSON body naming the known ones; a page
 * that fails gets 500 with the reason, and the port keeps serving.
 *
 * <p>Served by the JDK's HTTP server (its dispatcher thread) on {@link #THREADS} daemon handler
 * threads; pages read in-memory state only. A client must not be able to take the port: unless the
 * JVM is started with other values, a request must arrive within {@code
 * sun.net.httpserver.maxReqTime} (10 s) and its answer leave within {@code
 * sun.net.httpserver.maxRspTime} (30 s), or its connection is closed, and at most {@code
 * jdk.httpserver.maxConnections} (64) connections are open at once (more are closed on accept). The
 * JDK reads these once, when its first HTTP server starts.
 */
public final class HttpEndpoint implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(HttpEndpoint.class);
  private static final String JSON = "application/json";

  /** Handler threads: a scrape and a health check answered at once. */
  static final int THREADS = 2;

  static {
    setUnlessSet("sun.net.httpserver.maxReqTime", "10");
    setUnlessSet("sun.net.httpserver.maxRspTime", "30");
    setUnlessSet("jdk.httpserver.maxConnections", "64");
  }

  private static void setUnlessSet(String key, String value) {
    if (System.getProperty(key) == null) {
      System.setProperty(key, value);
    }
  }

  /** What a page answers. */
  public record Answer(int status, String contentType, byte[] body) {
    public Answer {
      requireNonNull(contentType, "contentType is null");
      requireNonNull(body, "body is null");
    }

    /** 200 with {@code value} written as JSON (maps, lists, strings, numbers, booleans). */
    public static Answer json(Object value) {
      return json(200, value);
    }

    public static Answer json(int status, Object value) {
      return new Answer(status, JSON, Json.write(value).getBytes(StandardCharsets.UTF_8));
    }

    /** 200 with plain text. */
    public static Answer text(String body) {
      return new Answer(200, "text/plain; charset=utf-8", body.getBytes(StandardCharsets.UTF_8));
    }
  }

  /** A page: its answer to a GET with these query parameters (the last value of each name). */
  @FunctionalInterface
  public interface Page {
    Answer answer(Map<String, String> query);

    /** A page that takes no parameters. */
    static Page of(Supplier<Answer> answer) {
      return query -> answer.get();
    }
  }

  /**
   * Which pages are the operators' (they list applications, users, queues, names): with {@code
   * enforced}, each needs {@code Authorization: Bearer} with {@code token} ({@link
   * io.faro.common.auth.AdminTokens}), 401 without it and 403 when this process holds no admin
   * secret (empty {@code token}). Not enforced (authentication off), every page is open.
   */
  public record Admin(Set<String> paths, boolean enforced, Optional<String> token) {
    /** Every page open to anyone. */
    public static final Admin OPEN = new Admin(Set.of(), false, Optional.empty());

    public Admin {
      paths = Set.copyOf(paths);
      requireNonNull(token, "token is null");
    }

    /** The operators' pages {@code paths}, under {@code auth} (a member's settings). */
    public static Admin of(Set<String> paths, AuthSettings auth) {
      return new Admin(paths, auth.enabled(), auth.admin().map(AdminTokens::http));
    }
  }

  private final HttpServer server;
  private final ExecutorService thread;
  private final Map<String, Page> pages;
  private final Admin admin;

  /**
   * Binds {@code bindHost:port} (0: a free port) and serves {@code pages} by exact path, plus
   * {@code /metrics} from {@code metrics}.
   *
   * @throws IOException when the port cannot be bound
   */
  public HttpEndpoint(
      String bindHost, int port, String threadName, FaroMetrics metrics, Map<String, Page> pages)
      throws IOException {
    this(bindHost, port, threadName, metrics, pages, Admin.OPEN);
  }

  /** As above, with the operators' pages {@code admin} guarded. */
  public HttpEndpoint(
      String bindHost,
      int port,
      String threadName,
      FaroMetrics metrics,
      Map<String, Page> pages,
      Admin admin)
      throws IOException {
    requireNonNull(metrics, "metrics is null");
    this.admin = requireNonNull(admin, "admin is null");
    Map<String, Page> all = new LinkedHashMap<>(pages);
    all.put("/metrics", query -> metricsAnswer(metrics));
    this.pages = Map.copyOf(all);
    this.server = HttpServer.create(new InetSocketAddress(bindHost, port), 64);
    AtomicInteger threads = new AtomicInteger();
    this.thread =
        Executors.newFixedThreadPool(
            THREADS,
            r -> {
              Thread t = new Thread(r, threadName + "-" + threads.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    server.setExecutor(thread);
    server.createContext("/", this::serve);
    server.start();
  }

  private static Answer metricsAnswer(FaroMetrics metrics) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(64 * 1024);
    try {
      metrics.writeText(out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new Answer(200, FaroMetrics.textContentType(), out.toByteArray());
  }

  /** The bound port. */
  public int port() {
    return server.getAddress().getPort();
  }

  private void serve(HttpExchange exchange) throws IOException {
    try (exchange) {
      String method = exchange.getRequestMethod();
      boolean head = method.equals("HEAD");
      Answer answer;
      if (!head && !method.equals("GET")) {
        exchange.getResponseHeaders().set("Allow", "GET, HEAD");
        answer = Answer.json(405, Map.of("error", "method " + method + " not allowed"));
      } else {
        answer = refusal(exchange);
        if (answer == null) {
          answer =
              answer(exchange.getRequestURI().getPath(), exchange.getRequestURI().getRawQuery());
        }
      }
      exchange.getResponseHeaders().set("Content-Type", answer.contentType());
      exchange.sendResponseHeaders(answer.status(), head ? -1 : answer.body().length);
      if (!head) {
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(answer.body());
        }
      }
    }
  }

  /** Why an operators' page is refused to this request, or null. */
  private Answer refusal(HttpExchange exchange) {
    String path = exchange.getRequestURI().getPath();
    String normal =
        path.length() > 1 && path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
    if (!admin.enforced() || !admin.paths().contains(normal)) {
      return null;
    }
    if (admin.token().isEmpty()) {
      return Answer.json(
          403,
          Map.of(
              "error",
              normal
                  + " lists applications and is for operators: this process holds no admin "
                  + "secret (faro.auth.admin.secret.file), so it serves it to nobody"));
    }
    if (AdminTokens.bears(exchange.getRequestHeaders().getFirst("Authorization"), admin.token())) {
      return null;
    }
    exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"faro-admin\"");
    return Answer.json(
        401,
        Map.of(
            "error",
            normal
                + " lists applications and is for operators: send Authorization: Bearer with the"
                + " admin token (bin/faro admin ... --conf FILE sends it; bin/faro admin"
                + " http-token --conf FILE prints it; FILE names faro.auth.admin.secret.file)"));
  }

  /** Query parameters, decoded; at most 16, each name and value at most 256 characters. */
  static Map<String, String> query(String raw) {
    Map<String, String> out = new LinkedHashMap<>();
    if (raw == null || raw.isEmpty()) {
      return out;
    }
    String[] pairs = raw.split("&", 17);
    if (pairs.length > 16) {
      throw new IllegalArgumentException("more than 16 query parameters");
    }
    for (String pair : pairs) {
      int eq = pair.indexOf('=');
      String name = decode(eq < 0 ? pair : pair.substring(0, eq));
      String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
      if (name.length() > 256 || value.length() > 256) {
        throw new IllegalArgumentException("a query parameter longer than 256 characters");
      }
      out.put(name, value);
    }
    return out;
  }

  private static String decode(String s) {
    return URLDecoder.decode(s, StandardCharsets.UTF_8);
  }

  private Answer answer(String path, String rawQuery) {
    String normal =
        path.length() > 1 && path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
    Page page = pages.get(normal);
    if (page == null) {
      return Answer.json(
          404,
          Map.of("error", "no page " + path, "pages", pages.keySet().stream().sorted().toList()));
    }
    Map<String, String> query;
    try {
      query = query(rawQuery);
    } catch (IllegalArgumentException e) {
      return Answer.json(400, Map.of("error", "bad query: " + e.getMessage()));
    }
    try {
      return page.answer(query);
    } catch (BadRequest e) {
      return Answer.json(400, Map.of("error", e.getMessage()));
    } catch (RuntimeException e) {
      LOG.warn("HTTP page {} failed", normal, e);
      return Answer.json(500, Map.of("error", String.valueOf(e)));
    }
  }

  /**
   * Binds an endpoint like the constructor, or says why not naming {@code portKey}.
   *
   * @throws IllegalStateException naming the address, the key and why (port in use...)
   */
  public static HttpEndpoint start(
      String bindHost,
      int port,
      String portKey,
      String threadName,
      FaroMetrics metrics,
      Map<String, Page> pages) {
    return start(bindHost, port, portKey, threadName, metrics, pages, Admin.OPEN);
  }

  /** As above, with the operators' pages {@code admin} guarded. */
  public static HttpEndpoint start(
      String bindHost,
      int port,
      String portKey,
      String threadName,
      FaroMetrics metrics,
      Map<String, Page> pages,
      Admin admin) {
    try {
      return new HttpEndpoint(bindHost, port, threadName, metrics, pages, admin);
    } catch (IOException e) {
      throw new IllegalStateException(
          BindFailures.find(e)
              .map(
                  b ->
                      BindFailures.message(threadName, bindHost, port, portKey, b)
                          + "; -1 turns the HTTP port off")
              .orElse(threadName + " cannot start on port " + port + " (" + portKey + "): " + e),
          e);
    }
  }

  /**
   * The {@code limit} parameter of a paged list: {@code fallback} when absent.
   *
   * @throws BadRequest when it is not a number from 1 to {@code max}
   */
  public static int limit(Map<String, String> query, int fallback, int max) {
    String text = query.get("limit");
    if (text == null) {
      return fallback;
    }
    try {
      int limit = Integer.parseInt(text);
      if (limit >= 1 && limit <= max) {
        return limit;
      }
    } catch (NumberFormatException e) {
      // answered below
    }
    throw new BadRequest("limit must be a number from 1 to " + max + ", not " + text);
  }

  /**
   * Puts one page of a list into {@code out}: under {@code name} the rows of the entries of {@code
   * all} after {@code after} (null: from the first), at most {@code limit}; under {@code
   * total_<name>} the size of the whole list; under {@code next_after} the {@code id} of the page's
   * last row when more follow, else "". Each row must have an {@code id} that names its key.
   */
  public static <K, V> void page(
      SortedMap<K, V> all,
      K after,
      int limit,
      String name,
      Function<V, Map<String, Object>> row,
      Map<String, Object> out) {
    SortedMap<K, V> from = after == null ? all : all.tailMap(after);
    List<Map<String, Object>> rows = new ArrayList<>();
    String next = "";
    for (Map.Entry<K, V> e : from.entrySet()) {
      if (e.getKey().equals(after)) {
        continue;
      }
      if (rows.size() == limit) {
        next = String.valueOf(rows.get(rows.size() - 1).get("id"));
        break;
      }
      rows.add(row.apply(e.getValue()));
    }
    out.put("total_" + name, all.size());
    out.put(name, rows);
    out.put("next_after", next);
  }

  /** Thrown by a page for a parameter it cannot use: answered 400 with the message. */
  public static final class BadRequest extends RuntimeException {
    public BadRequest(String message) {
      super(message);
    }
  }

  @Override
  public void close() {
    server.stop(0);
    thread.shutdownNow();
  }
}
