package io.faro.master.server;

import static java.util.Objects.requireNonNull;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.faro.common.json.Json;
import io.faro.master.mapping.ProtoMapper;
import io.faro.proto.MasterStatusResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's HTTP status page, for operators and load balancers: {@code /status} answers this
 * master's own view as JSON (the fields of {@code bin/faro admin masters --json}), {@code /} the
 * same as text. Served by the JDK's HTTP server on one daemon thread; reads only in-memory state,
 * so it answers even while the group has no leader.
 */
final class MasterHttpServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MasterHttpServer.class);

  private final HttpServer server;
  private final ExecutorService thread;
  private final Supplier<MasterStatusResponse> status;

  MasterHttpServer(
      String bindHost, int port, String threadName, Supplier<MasterStatusResponse> status)
      throws IOException {
    this.status = requireNonNull(status, "status is null");
    this.server = HttpServer.create(new InetSocketAddress(bindHost, port), 16);
    this.thread =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, threadName);
              t.setDaemon(true);
              return t;
            });
    server.setExecutor(thread);
    server.createContext(
        "/status",
        exchange ->
            answer(
                exchange, "application/json", Json.write(ProtoMapper.statusFields(status.get()))));
    server.createContext(
        "/", exchange -> answer(exchange, "text/plain; charset=utf-8", text(status.get())));
    server.start();
  }

  int port() {
    return server.getAddress().getPort();
  }

  private static String text(MasterStatusResponse s) {
    StringBuilder out = new StringBuilder("Faro master ").append(s.getMasterId()).append('\n');
    ProtoMapper.statusFields(s)
        .forEach((key, value) -> out.append(String.format("%-16s %s%n", key, value)));
    return out.toString();
  }

  private static void answer(HttpExchange exchange, String type, String body) throws IOException {
    try (exchange) {
      if (!exchange.getRequestMethod().equals("GET")
          && !exchange.getRequestMethod().equals("HEAD")) {
        exchange.sendResponseHeaders(405, -1);
        return;
      }
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", type);
      exchange.sendResponseHeaders(
          200, exchange.getRequestMethod().equals("HEAD") ? -1 : bytes.length);
      if (!exchange.getRequestMethod().equals("HEAD")) {
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(bytes);
        }
      }
    } catch (RuntimeException e) {
      LOG.warn("HTTP status request failed", e);
      throw e;
    }
  }

  @Override
  public void close() {
    server.stop(0);
    thread.shutdownNow();
  }
}
