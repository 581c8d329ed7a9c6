package io.faro.cli;

import io.faro.common.auth.AdminTokens;
import io.faro.common.auth.AuthOptions;
import io.faro.common.auth.Secret;
import io.faro.common.config.ConfigOption;
import io.faro.common.json.Json;
import io.faro.common.network.HostPort;
import io.faro.common.process.ServerProcess;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Admin commands that read the JSON API of a master's or a worker's HTTP port ({@code /api/v1/}):
 * {@code apps} and {@code shuffles} from a master, following the pages to the end, and {@code
 * disks} from a worker. Each prints a table, or with {@code --json} one JSON object.
 */
final class AdminApiCommands {
  private AdminApiCommands() {}

  /** The HTTP endpoint a command reads and how long it waits. */
  static final class Target {
    @Option(
        names = "--http",
        required = true,
        paramLabel = "HOST:PORT",
        description =
            "HTTP endpoint of a master (faro.master.http.port, 9096) or of a worker"
                + " (faro.worker.http.port, 9103), as the command needs; cluster.json of a local"
                + " cluster lists each member's httpPort.")
    String http;

    @Option(
        names = "--timeout",
        defaultValue = "10s",
        paramLabel = "DURATION",
        description = "How long to wait for each answer (default: ${DEFAULT-VALUE}).")
    String timeout;

    @Option(
        names = "--conf",
        paramLabel = "FILE",
        description =
            "Settings file naming faro.auth.admin.secret.file: with authentication on, the pages"
                + " that list applications (apps, shuffles, quotas) need the admin token derived"
                + " from it (bin/faro local-cluster writes <work-dir>/admin.conf).")
    Path confFile;

    private HttpClient client;

    /** The Authorization header's value for the operators' pages, if --conf gives the secret. */
    private Optional<String> bearer() {
      return confFile == null ? Optional.empty() : adminToken(confFile).map(t -> "Bearer " + t);
    }

    private HttpClient client(Duration wait) {
      if (client == null) {
        client = HttpClient.newBuilder().connectTimeout(wait).build();
      }
      return client;
    }

    /**
     * GETs {@code path} and reads the JSON object it answers.
     *
     * @throws IllegalStateException naming the address, the page and why
     */
    @SuppressWarnings("unchecked")
    Map<String, Object> get(String path) {
      HostPort where = HostPort.parse(http);
      URI uri = URI.create("http://" + where.host() + ":" + where.port() + path);
      Duration wait = ConfigOption.parseDuration(timeout);
      HttpResponse<String> response;
      try {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(wait);
        bearer().ifPresent(token -> request.header("Authorization", token));
        response = client(wait).send(request.build(), HttpResponse.BodyHandlers.ofString());
      } catch (IOException e) {
        throw new IllegalStateException(
            "cannot read "
                + uri
                + ": "
                + e
                + " (is --http the HTTP port of a running master or worker?)",
            e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted reading " + uri, e);
      }
      Object body;
      try {
        body = Json.parse(response.body());
      } catch (IllegalArgumentException e) {
        throw new IllegalStateException(
            uri + " answered " + response.statusCode() + ", " + e.getMessage());
      }
      if (!(body instanceof Map)) {
        throw new IllegalStateException(uri + " answered something else than a JSON object");
      }
      Map<String, Object> map = (Map<String, Object>) body;
      if (response.statusCode() != 200) {
        throw new IllegalStateException(
            uri + " answered " + response.statusCode() + ": " + map.getOrDefault("error", map));
      }
      return map;
    }

    /** Every row of a paged list ({@code key}), following {@code next_after} to the last page. */
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> all(String path, String key) {
      List<Map<String, Object>> rows = new ArrayList<>();
      String after = "";
      do {
        String previous = after;
        Map<String, Object> page =
            get(
                path
                    + "?limit=10000"
                    + (after.isEmpty()
                        ? ""
                        : "&after=" + URLEncoder.encode(after, StandardCharsets.UTF_8)));
        rows.addAll((List<Map<String, Object>>) page.get(key));
        after = String.valueOf(page.getOrDefault("next_after", ""));
        if (!after.isEmpty() && after.equals(previous)) {
          throw new IllegalStateException(
              path + " answered the same next page twice (" + after + "): stopping");
        }
      } while (!after.isEmpty());
      return rows;
    }
  }

  private static void print(
      CommandLine.Model.CommandSpec spec,
      boolean json,
      String key,
      List<Map<String, Object>> rows,
      List<String> columns) {
    PrintWriter out = spec.commandLine().getOut();
    if (json) {
      Map<String, Object> report = new LinkedHashMap<>();
      report.put(key, rows);
      out.print(Json.write(report));
    } else {
      List<Integer> widths = new ArrayList<>();
      for (String c : columns) {
        int w = c.length();
        for (Map<String, Object> r : rows) {
          w = Math.max(w, String.valueOf(r.getOrDefault(c, "-")).length());
        }
        widths.add(w);
      }
      StringBuilder header = new StringBuilder();
      for (int i = 0; i < columns.size(); i++) {
        header.append(
            String.format(
                Locale.ROOT,
                "%-" + (widths.get(i) + 2) + "s",
                columns.get(i).toUpperCase(Locale.ROOT)));
      }
      out.println(header.toString().stripTrailing());
      for (Map<String, Object> r : rows) {
        StringBuilder line = new StringBuilder();
        for (int i = 0; i < columns.size(); i++) {
          line.append(
              String.format(
                  Locale.ROOT,
                  "%-" + (widths.get(i) + 2) + "s",
                  r.getOrDefault(columns.get(i), "-")));
        }
        out.println(line.toString().stripTrailing());
      }
    }
    out.flush();
  }

  @Command(
      name = "apps",
      mixinStandardHelpOptions = true,
      description =
          "Lists every application the masters know: its user, queue and name, and what it"
              + " holds (shuffles, partitions, slots placed, bytes on the workers as their"
              + " heartbeats said), from a master's HTTP API (/api/v1/apps, every page).")
  static final class Apps implements Callable<Integer> {
    @CommandLine.Mixin Target target = new Target();

    @Option(names = "--json", description = "Print one JSON object instead of a table.")
    boolean json;

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
      print(
          spec,
          json,
          "apps",
          target.all("/api/v1/apps", "apps"),
          List.of(
              "id",
              "user",
              "queue",
              "name",
              "shuffles",
              "partitions",
              "slots",
              "bytes",
              "registered_at_ms"));
      return 0;
    }
  }

  @Command(
      name = "quotas",
      mixinStandardHelpOptions = true,
      description =
          "Lists each quota (limit lines of the admission rules) with what each user or queue it"
              + " limits holds now: shuffles, partitions, bytes on the workers, and the highest"
              + " share of a limit used (1: new shuffles are refused), from a master's HTTP API"
              + " (/api/v1/quotas).")
  static final class Quotas implements Callable<Integer> {
    @CommandLine.Mixin Target target = new Target();

    @Option(names = "--json", description = "Print one JSON object instead of a table.")
    boolean json;

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
      print(
          spec,
          json,
          "quotas",
          target.all("/api/v1/quotas", "quotas"),
          List.of(
              "quota",
              "user",
              "queue",
              "shuffles",
              "max_shuffles",
              "partitions",
              "max_partitions",
              "bytes",
              "max_bytes",
              "use"));
      return 0;
    }
  }

  @Command(
      name = "shuffles",
      mixinStandardHelpOptions = true,
      description =
          "Lists every shuffle the masters placed, with its partitions, workers and slots, from"
              + " a master's HTTP API (/api/v1/shuffles, every page).")
  static final class Shuffles implements Callable<Integer> {
    @CommandLine.Mixin Target target = new Target();

    @Option(names = "--app", paramLabel = "APP", description = "Only this application's.")
    String app;

    @Option(names = "--json", description = "Print one JSON object instead of a table.")
    boolean json;

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
      List<Map<String, Object>> rows = target.all("/api/v1/shuffles", "shuffles");
      if (app != null) {
        rows = rows.stream().filter(r -> app.equals(r.get("app"))).toList();
      }
      print(spec, json, "shuffles", rows, List.of("id", "partitions", "workers", "slots"));
      return 0;
    }
  }

  @Command(
      name = "disks",
      mixinStandardHelpOptions = true,
      description =
          "Shows one worker's disks (state, usable and held bytes, bytes written and read, open"
              + " partitions) from its HTTP API (/api/v1/disks).")
  static final class Disks implements Callable<Integer> {
    @CommandLine.Mixin Target target = new Target();

    @Option(names = "--json", description = "Print the worker's answer as it is.")
    boolean json;

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    @SuppressWarnings("unchecked")
    public Integer call() {
      List<Map<String, Object>> rows =
          (List<Map<String, Object>>) target.get("/api/v1/disks").get("disks");
      print(
          spec,
          json,
          "disks",
          rows,
          List.of(
              "index",
              "path",
              "tier",
              "state",
              "usable_bytes",
              "used_bytes",
              "written_bytes",
              "read_bytes",
              "open_partitions"));
      return 0;
    }
  }

  /** {@code admin http-token}: the bearer token of the HTTP ports' operators' pages. */
  @Command(
      name = "http-token",
      mixinStandardHelpOptions = true,
      description =
          "Prints the bearer token of the operators' HTTP pages (apps, shuffles, quotas), derived"
              + " from the admin secret of --conf, for tools other than bin/faro admin: curl -H"
              + " \"Authorization: Bearer $(bin/faro admin http-token --conf FILE)\" ...")
  static final class HttpToken implements Callable<Integer> {
    @Option(
        names = "--conf",
        required = true,
        paramLabel = "FILE",
        description = "Settings file naming faro.auth.admin.secret.file.")
    Path confFile;

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
      Optional<String> token = adminToken(confFile);
      if (token.isEmpty()) {
        spec.commandLine()
            .getErr()
            .println(
                "faro admin http-token: "
                    + confFile
                    + " does not set "
                    + AuthOptions.ADMIN_SECRET_FILE.key());
        return 2;
      }
      spec.commandLine().getOut().println(token.get());
      return 0;
    }
  }

  /**
   * The admin token ({@link io.faro.common.auth.AdminTokens}) of the admin secret {@code conf}
   * names in faro.auth.admin.secret.file; empty when it names none.
   */
  static Optional<String> adminToken(Path conf) {
    String file =
        ServerProcess.configuration(conf, Map.of()).get(AuthOptions.ADMIN_SECRET_FILE).strip();
    if (file.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(
        AdminTokens.http(Secret.read(Path.of(file), AuthOptions.ADMIN_SECRET_FILE.key())));
  }
}
