package io.faro.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/helm/faro: no Kubernetes cluster runs here, so the chart is rendered and its output
 * checked, not installed. {@code helm lint --strict} lints it; {@code helm template} renders it
 * with the defaults and with other values; kubeconform validates every rendered document against
 * Kubernetes' own schemas, strictly (an unknown or mistyped field is an error, and so is a kind
 * without a schema); and the rendered YAML, read with PyYAML, is held to what matters when the pods
 * run: workers drain through {@code bin/faro admin stop-worker} before they stop, within a grace
 * longer than {@code faro.worker.graceful.timeout}; one disruption budget per role lets one pod go
 * at a time; a settings change rolls both roles (the ConfigMap's checksum on their pod templates)
 * and a grace below the timeout fails the render; probes ask each role's HTTP page; every master
 * knows every other as a Raft peer, by its stable name; and every key the chart sets is one
 * docs/configuration.md lists.
 *
 * <p>The tools are Go modules, built with the machine's {@code go} into target/helm-tools once (a
 * marker names what was installed; the first build takes a few minutes, later runs none): Helm
 * {@value #HELM} and kubeconform {@value #KUBECONFORM}, with their module and build caches there
 * too. Helm 4: the current major version.
 *
 * <p>The schemas are Kubernetes {@value #KUBERNETES}'s own: the OpenAPI document
 * api/openapi-spec/swagger.json of the k8s.io/kubernetes module at that tag, which the Go module
 * proxy serves like any module (18 MB; {@code go mod download -json} says where it unpacked it).
 * The JSON-schema collection kubeconform reads by default is on a host this machine cannot reach,
 * and the Go module proxy refuses it as a module (github.com/yannh/kubernetes-json-schema: 403), so
 * src/test/python/kubernetes_schemas.py makes the same kind of files from Kubernetes' document: a
 * standalone file per kind, every object that lists its properties closed to others, IntOrString
 * and Quantity as the API server reads them. Validating against the oldest Kubernetes release the
 * chart is meant for catches fields that newer releases added. A document the schemas must refuse
 * (an unknown field, a string for a number, a kind they do not know) is checked to fail, so that a
 * schema set that lets everything through cannot pass for one that works.
 */
class HelmChartIT {
  static final String HELM = "helm.sh/helm/v4/cmd/helm@v4.3.2";
  static final String KUBECONFORM = "github.com/yannh/kubeconform/cmd/kubeconform@v0.8.0";
  static final String KUBERNETES = "v1.34.4";

  private static final Duration INSTALL_TIMEOUT = Duration.ofMinutes(20);
  private static final Duration STEP_TIMEOUT = Duration.ofMinutes(2);
  private static final String NAMESPACE = "shuffle";
  private static final String CONF = "/etc/faro/conf/faro.conf";
  private static final ObjectMapper JSON = new ObjectMapper();

  private static Path deploy;
  private static Path chart;
  private static Path tools;
  private static Path schemas;
  private static Path python;

  @BeforeAll
  static void installTools() throws Exception {
    deploy = Path.of(System.getProperty("faro.deploy.dir"));
    chart = deploy.resolve("helm/faro");
    tools = deploy.resolve("target/helm-tools");
    Files.createDirectories(tools.resolve("bin"));
    Path venv = Path.of(System.getProperty("faro.docker.venv"));
    python = PythonVenv.ensure(venv, "PyYAML==6.0.4").resolve("bin/python");
    goInstall(HELM);
    goInstall(KUBECONFORM);
    schemas = tools.resolve("kubernetes-schemas/" + KUBERNETES);
    Path converted = schemas.resolve(".converted");
    if (!Files.isRegularFile(converted)) {
      Path log = tools.resolve("schemas.log");
      Files.deleteIfExists(log);
      int code =
          Processes.runLogged(
              go("mod", "download", "-json", "k8s.io/kubernetes@" + KUBERNETES),
              log,
              INSTALL_TIMEOUT);
      String answer = Files.readString(log);
      assertThat(code).as("%s", answer).isZero();
      JsonNode module = JSON.readTree(answer.substring(answer.indexOf('{')));
      assertThat(module.path("Error").isMissingNode()).as("%s", answer).isTrue();
      Path swagger = Path.of(module.get("Dir").asText(), "api/openapi-spec/swagger.json");
      String made =
          run(
              List.of(
                  python.toString(),
                  deploy.resolve("src/test/python/kubernetes_schemas.py").toString(),
                  swagger.toString(),
                  schemas.toString()));
      assertThat(made).contains("schemas written");
      Files.writeString(converted, "k8s.io/kubernetes@" + KUBERNETES + "\n");
    }
  }

  /** Installs a Go module's command into target/helm-tools/bin unless the marker names it. */
  private static void goInstall(String moduleAtVersion) throws Exception {
    Path marker = tools.resolve("bin/.installed");
    if (Files.isRegularFile(marker) && Files.readAllLines(marker).contains(moduleAtVersion)) {
      return;
    }
    Path log = tools.resolve("install.log");
    long start = System.nanoTime();
    int code = Processes.runLogged(go("install", moduleAtVersion), log, INSTALL_TIMEOUT);
    assertThat(code).as("go install %s failed; see %s", moduleAtVersion, log).isZero();
    Files.writeString(
        log,
        "installed "
            + moduleAtVersion
            + " in "
            + Duration.ofNanos(System.nanoTime() - start)
            + "\n",
        StandardOpenOption.APPEND);
    // Only the build cache: the module cache keeps the schemas' module.
    Processes.runLogged(go("clean", "-cache"), log, STEP_TIMEOUT);
    Files.writeString(
        marker, moduleAtVersion + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
  }

  /** The go command, with every path it writes under target/helm-tools. */
  private static ProcessBuilder go(String... args) {
    List<String> command = new ArrayList<>();
    command.add(goBinary());
    command.addAll(Arrays.asList(args));
    ProcessBuilder builder = new ProcessBuilder(command).directory(tools.toFile());
    Map<String, String> env = builder.environment();
    env.put("GOPATH", tools.resolve("gopath").toString());
    env.put("GOMODCACHE", tools.resolve("gopath/pkg/mod").toString());
    env.put("GOCACHE", tools.resolve("gocache").toString());
    env.put("GOBIN", tools.resolve("bin").toString());
    // -modcacherw: a module cache that mvn clean can delete.
    env.put("GOFLAGS", "-mod=mod -modcacherw -buildvcs=false");
    env.put("GOTOOLCHAIN", "local");
    // Go's own settings and telemetry files, which default to the home directory.
    env.put("XDG_CONFIG_HOME", tools.resolve("config").toString());
    return builder;
  }

  private static String goBinary() {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "go"))) {
        return Path.of(dir, "go").toString();
      }
    }
    return "/usr/local/go/bin/go";
  }

  /** Runs a command (helm with its files under target/helm-tools); its exit code and output. */
  private static Processes.Result exec(List<String> command) throws Exception {
    ProcessBuilder builder = new ProcessBuilder(command);
    Map<String, String> env = builder.environment();
    env.put("HELM_CACHE_HOME", tools.resolve("helm-home/cache").toString());
    env.put("HELM_CONFIG_HOME", tools.resolve("helm-home/config").toString());
    env.put("HELM_DATA_HOME", tools.resolve("helm-home/data").toString());
    Path out = Files.createTempFile(tools, "run", ".out");
    try {
      int code = Processes.runLogged(builder, out, STEP_TIMEOUT);
      return new Processes.Result(code, Files.readString(out));
    } finally {
      Files.deleteIfExists(out);
    }
  }

  private static String run(List<String> command) throws Exception {
    Processes.Result result = exec(command);
    assertThat(result.exitCode())
        .as("%s:%n%s", String.join(" ", command), result.output())
        .isZero();
    return result.output();
  }

  private static String helm() {
    return tools.resolve("bin/helm").toString();
  }

  private static List<String> template(Path valuesFile, String... more) {
    List<String> command = new ArrayList<>();
    command.addAll(List.of(helm(), "template", "faro", chart.toString(), "--namespace", NAMESPACE));
    if (valuesFile != null) {
      command.addAll(List.of("--values", valuesFile.toString()));
    }
    command.addAll(Arrays.asList(more));
    return command;
  }

  /** kubeconform over a file or directory: strict, every kind needing a schema. */
  private static Processes.Result validate(Path target) throws Exception {
    return exec(
        List.of(
            tools.resolve("bin/kubeconform").toString(),
            "-strict",
            "-summary",
            "-kubernetes-version",
            KUBERNETES.substring(1),
            "-schema-location",
            schemas + "/{{ .ResourceKind }}{{ .KindSuffix }}.json",
            target.toString()));
  }

  /**
   * The chart rendered with {@code values} (YAML, or null for the defaults) and {@code more} flags,
   * every document validated; the documents as JSON.
   */
  private static Rendered render(Path dir, String values, String... more) throws Exception {
    Files.createDirectories(dir);
    Path valuesFile = null;
    if (values != null) {
      valuesFile = dir.resolve("values.yaml");
      Files.writeString(valuesFile, values);
    }
    Path out = dir.resolve("rendered");
    List<String> command = new ArrayList<>(template(valuesFile, more));
    command.addAll(List.of("--output-dir", out.toString()));
    run(command);
    Processes.Result valid = validate(out);
    assertThat(valid.exitCode()).as("kubeconform:%n%s", valid.output()).isZero();
    assertThat(valid.output()).contains("Invalid: 0, Errors: 0, Skipped: 0");
    Path docs = dir.resolve("docs.json");
    run(
        List.of(
            python.toString(),
            deploy.resolve("src/test/python/yaml_docs.py").toString(),
            out.toString(),
            docs.toString()));
    List<JsonNode> found = new ArrayList<>();
    JSON.readTree(docs.toFile()).forEach(d -> found.add(d.get("doc")));
    assertThat(valid.output()).contains("Valid: " + found.size() + ",");
    return new Rendered(found);
  }

  /** Rendered documents. */
  record Rendered(List<JsonNode> docs) {
    List<JsonNode> all(String kind) {
      return docs.stream().filter(d -> d.path("kind").asText().equals(kind)).toList();
    }

    JsonNode one(String kind, String name) {
      List<JsonNode> found =
          all(kind).stream()
              .filter(d -> d.path("metadata").path("name").asText().equals(name))
              .toList();
      assertThat(found).as("%s %s", kind, name).hasSize(1);
      return found.get(0);
    }

    JsonNode masters() {
      return one("StatefulSet", "faro-master");
    }

    JsonNode workers() {
      return one("StatefulSet", "faro-worker");
    }

    /** faro.conf of the ConfigMap: key to value. */
    Map<String, String> settings() {
      String text = one("ConfigMap", "faro-config").path("data").path("faro.conf").asText();
      Map<String, String> settings = new LinkedHashMap<>();
      for (String line : text.split("\n")) {
        String trimmed = line.strip();
        if (trimmed.isEmpty() || trimmed.startsWith("#")) {
          continue;
        }
        int space = trimmed.indexOf(' ');
        assertThat(space).as("faro.conf line %s", line).isPositive();
        String key = trimmed.substring(0, space);
        assertThat(settings).as("faro.conf sets %s twice", key).doesNotContainKey(key);
        settings.put(key, trimmed.substring(space + 1).strip());
      }
      return settings;
    }
  }

  private static JsonNode podSpec(JsonNode statefulSet) {
    return statefulSet.path("spec").path("template").path("spec");
  }

  private static JsonNode container(JsonNode statefulSet) {
    JsonNode containers = podSpec(statefulSet).path("containers");
    assertThat(containers.size()).isEqualTo(1);
    return containers.get(0);
  }

  /** A container's command and args, one string. */
  private static String commandLine(JsonNode container) {
    return Stream.concat(strings(container.path("command")), strings(container.path("args")))
        .collect(Collectors.joining(" "));
  }

  private static Stream<String> strings(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asText()));
    return out.stream();
  }

  private static String checksum(JsonNode statefulSet) {
    return statefulSet
        .path("spec")
        .path("template")
        .path("metadata")
        .path("annotations")
        .path("checksum/config")
        .asText();
  }

  private static long seconds(String duration) {
    assertThat(duration).matches("[0-9]+s");
    return Long.parseLong(duration.substring(0, duration.length() - 1));
  }

  @Test
  void lintsStrictlyWithTheDefaultsAndOtherValues(@TempDir Path dir) throws Exception {
    run(List.of(helm(), "lint", "--strict", chart.toString()));
    Path values = dir.resolve("values.yaml");
    Files.writeString(values, OTHER_VALUES);
    run(List.of(helm(), "lint", "--strict", chart.toString(), "--values", values.toString()));
  }

  @Test
  void theDefaultsDrainWorkersWithinTheirGraceOneAtATime(@TempDir Path dir) throws Exception {
    Rendered r = render(dir, null);
    assertThat(r.docs().stream().map(d -> d.path("kind").asText()).sorted())
        .containsExactly(
            "ConfigMap",
            "PodDisruptionBudget",
            "PodDisruptionBudget",
            "Secret",
            "Service",
            "Service",
            "StatefulSet",
            "StatefulSet");
    Map<String, String> settings = r.settings();
    JsonNode workers = r.workers();
    JsonNode worker = container(workers);

    // The drain: bin/faro admin stop-worker, proving the admin secret of faro.conf.
    String preStop =
        strings(worker.path("lifecycle").path("preStop").path("exec").path("command"))
            .collect(Collectors.joining(" "));
    assertThat(preStop)
        .contains("/opt/faro/bin/faro admin stop-worker --graceful")
        .contains("--conf " + CONF)
        .contains("--id \"${POD_NAME}\"")
        .contains("--worker-endpoint \"${POD_FQDN}:" + settings.get("faro.worker.rpc.port") + "\"");
    assertThat(settings.get("faro.auth.admin.secret.file")).startsWith("/etc/faro/secrets/");
    assertThat(settings.get("faro.auth.cluster.secret.file")).startsWith("/etc/faro/secrets/");

    // The grace: longer than the graceful timeout, and the drain's own limit between the two.
    long timeout = seconds(settings.get("faro.worker.graceful.timeout"));
    long grace = podSpec(workers).path("terminationGracePeriodSeconds").asLong();
    assertThat(timeout).isEqualTo(60);
    assertThat(grace).isEqualTo(120).isGreaterThan(timeout);
    Matcher stop = Pattern.compile("--stop-timeout ([0-9]+)s").matcher(preStop);
    assertThat(stop.find()).as(preStop).isTrue();
    assertThat(Long.parseLong(stop.group(1))).isGreaterThan(timeout).isLessThan(grace);

    // One disruption budget per role, each of one pod, selecting that role's pods only.
    JsonNode workerLabels = workers.path("spec").path("template").path("metadata").path("labels");
    JsonNode masterLabels =
        r.masters().path("spec").path("template").path("metadata").path("labels");
    List<JsonNode> selectingWorkers = new ArrayList<>();
    for (JsonNode pdb : r.all("PodDisruptionBudget")) {
      assertThat(pdb.path("spec").path("maxUnavailable").asInt()).isEqualTo(1);
      assertThat(pdb.path("spec").path("maxUnavailable").isInt()).isTrue();
      JsonNode match = pdb.path("spec").path("selector").path("matchLabels");
      if (selects(match, workerLabels)) {
        assertThat(selects(match, masterLabels)).isFalse();
        selectingWorkers.add(pdb);
      }
    }
    assertThat(selectingWorkers).hasSize(1);
    assertThat(
            r.all("PodDisruptionBudget").stream()
                .filter(
                    p ->
                        selects(p.path("spec").path("selector").path("matchLabels"), masterLabels)))
        .hasSize(1);

    // Workers: stable identities, one at a time, data and metadata on their own volumes.
    assertThat(workers.path("spec").path("serviceName").asText()).isEqualTo("faro-worker");
    assertThat(workers.path("spec").path("updateStrategy").path("type").asText())
        .isEqualTo("RollingUpdate");
    assertThat(workers.path("spec").path("replicas").asInt()).isEqualTo(3);
    assertThat(commandLine(worker))
        .isEqualTo(
            "worker --conf "
                + CONF
                + " --set faro.worker.id=$(POD_NAME) --set"
                + " faro.worker.host=$(POD_FQDN)");
    assertThat(env(worker, "POD_FQDN"))
        .isEqualTo("$(POD_NAME).faro-worker." + NAMESPACE + ".svc.cluster.local");
    assertThat(claims(workers)).containsExactly("meta", "data");
    assertThat(mounts(worker))
        .containsEntry("meta", "/var/lib/faro")
        .containsEntry("data", "/data")
        .containsEntry("config", "/etc/faro/conf")
        .containsEntry("secrets", "/etc/faro/secrets");
    assertThat(settings)
        .containsEntry("faro.worker.dirs", "/data/faro:ssd")
        .containsEntry("faro.worker.meta.dir", "/var/lib/faro/worker-meta");

    // Masters: m<ordinal> at stable names, every one a peer of the others.
    JsonNode masters = r.masters();
    assertThat(masters.path("spec").path("serviceName").asText()).isEqualTo("faro-master");
    assertThat(commandLine(container(masters)))
        .contains("exec /opt/faro/bin/faro master --conf " + CONF)
        .contains("--set \"faro.master.id=m${POD_NAME##*-}\"")
        .contains("--set \"faro.master.advertised.host=${POD_FQDN}\"");
    assertThat(env(container(masters), "POD_FQDN"))
        .isEqualTo("$(POD_NAME).faro-master." + NAMESPACE + ".svc.cluster.local");
    assertPeers(settings, 3);
    assertThat(claims(masters)).containsExactly("ratis");
    assertThat(mounts(container(masters))).containsEntry("ratis", "/var/lib/faro");
    assertThat(settings.get("faro.master.ratis.dir")).startsWith("/var/lib/faro/");
    for (JsonNode service : r.all("Service")) {
      assertThat(service.path("spec").path("clusterIP").asText()).isEqualTo("None");
      assertThat(service.path("spec").path("publishNotReadyAddresses").asBoolean()).isTrue();
    }

    // Probes on each role's HTTP port, at the page that answers there.
    assertProbes(container(masters), settings.get("faro.master.http.port"), "/status");
    assertProbes(worker, settings.get("faro.worker.http.port"), "/api/v1/disks");

    // Both roles: the image's user, no root, a read-only root, no capabilities; the config
    // checksum; FARO_JAVA_OPTS; the secrets mounted read-only.
    JsonNode secret = r.one("Secret", "faro-auth");
    assertThat(secret.path("data").path("cluster.secret").asText()).hasSizeGreaterThan(40);
    assertThat(secret.path("data").path("admin.secret").asText()).hasSizeGreaterThan(40);
    for (JsonNode set : List.of(masters, workers)) {
      JsonNode pod = podSpec(set);
      JsonNode c = container(set);
      assertThat(pod.path("securityContext").path("runAsUser").asInt()).isEqualTo(10001);
      assertThat(pod.path("securityContext").path("runAsNonRoot").asBoolean()).isTrue();
      assertThat(pod.path("securityContext").path("fsGroup").asInt()).isEqualTo(10001);
      assertThat(c.path("securityContext").path("readOnlyRootFilesystem").asBoolean()).isTrue();
      assertThat(c.path("securityContext").path("allowPrivilegeEscalation").asBoolean()).isFalse();
      assertThat(strings(c.path("securityContext").path("capabilities").path("drop")))
          .containsExactly("ALL");
      assertThat(pod.path("automountServiceAccountToken").asBoolean(true)).isFalse();
      assertThat(mounts(c)).containsEntry("tmp", "/tmp");
      assertThat(checksum(set)).matches("[0-9a-f]{64}");
      assertThat(env(c, "FARO_JAVA_OPTS")).startsWith("-Xmx");
      assertThat(c.path("resources").path("limits").path("memory").asText()).isNotEmpty();
      for (JsonNode mount : c.path("volumeMounts")) {
        if (List.of("secrets", "config").contains(mount.path("name").asText())) {
          assertThat(mount.path("readOnly").asBoolean()).as("%s", mount).isTrue();
        }
      }
      JsonNode secrets = volume(pod, "secrets").path("secret");
      assertThat(secrets.path("secretName").asText()).isEqualTo("faro-auth");
      assertThat(secrets.path("defaultMode").asInt()).isEqualTo(0440);
    }
    assertThat(checksum(masters)).isEqualTo(checksum(workers));
  }

  static final String OTHER_VALUES =
      """
      auth:
        existingSecret: faro-auth-managed
        clusterSecretKey: cluster
        adminSecretKey: admin
      master:
        replicas: 5
      worker:
        replicas: 5
        gracefulTimeoutSeconds: 300
        disks:
          - {name: nvme0, mountPath: /mnt/nvme0, tier: nvme, size: 500Gi, storageClass: local-nvme}
          - {name: hdd0, mountPath: /mnt/hdd0, tier: hdd, size: 2Ti, capacity: 1500g}
      settings:
        faro.worker.io.mode: buffered
        faro.master.slots.flush.weight: 0.25
        faro.worker.max.partitions: 1000000
      """;

  @Test
  void anExistingSecretMoreMembersAndOtherDisks(@TempDir Path dir) throws Exception {
    Rendered r = render(dir, OTHER_VALUES);
    assertThat(r.all("Secret")).isEmpty();
    Map<String, String> settings = r.settings();
    assertPeers(settings, 5);
    assertThat(r.workers().path("spec").path("replicas").asInt()).isEqualTo(5);
    assertThat(r.masters().path("spec").path("replicas").asInt()).isEqualTo(5);
    for (JsonNode set : List.of(r.masters(), r.workers())) {
      JsonNode secrets = volume(podSpec(set), "secrets").path("secret");
      assertThat(secrets.path("secretName").asText()).isEqualTo("faro-auth-managed");
      List<String> keys = new ArrayList<>();
      secrets.path("items").forEach(i -> keys.add(i.path("key").asText()));
      assertThat(keys).containsExactly("cluster", "admin");
    }
    assertThat(settings)
        .containsEntry("faro.worker.dirs", "/mnt/nvme0/faro:nvme,/mnt/hdd0/faro:hdd:1500g")
        .containsEntry("faro.worker.graceful.timeout", "300s")
        .containsEntry("faro.worker.io.mode", "buffered")
        .containsEntry("faro.master.slots.flush.weight", "0.25")
        .containsEntry("faro.worker.max.partitions", "1000000");
    JsonNode workers = r.workers();
    assertThat(claims(workers)).containsExactly("meta", "nvme0", "hdd0");
    assertThat(podSpec(workers).path("terminationGracePeriodSeconds").asLong()).isEqualTo(360);
    assertThat(
            strings(
                    container(workers)
                        .path("lifecycle")
                        .path("preStop")
                        .path("exec")
                        .path("command"))
                .collect(Collectors.joining(" ")))
        .contains("--stop-timeout 355s");
    JsonNode nvme = workers.path("spec").path("volumeClaimTemplates").get(1).path("spec");
    assertThat(nvme.path("storageClassName").asText()).isEqualTo("local-nvme");
    assertThat(nvme.path("resources").path("requests").path("storage").asText()).isEqualTo("500Gi");
  }

  @Test
  void aSettingChangeRollsBothRolesAndScalingDoesNot(@TempDir Path dir) throws Exception {
    Rendered first = render(dir.resolve("a"), null);
    Rendered again = render(dir.resolve("b"), null);
    Rendered changed =
        render(dir.resolve("c"), "settings:\n  faro.worker.heartbeat.interval: 10s\n");
    Rendered scaled = render(dir.resolve("d"), "worker:\n  replicas: 7\n");
    assertThat(changed.settings()).containsEntry("faro.worker.heartbeat.interval", "10s");
    for (var role :
        List.<java.util.function.Function<Rendered, JsonNode>>of(
            Rendered::masters, Rendered::workers)) {
      String base = checksum(role.apply(first));
      assertThat(checksum(role.apply(again))).isEqualTo(base);
      assertThat(checksum(role.apply(changed))).isNotEqualTo(base).matches("[0-9a-f]{64}");
      assertThat(checksum(role.apply(scaled))).isEqualTo(base);
    }
  }

  @Test
  void aGraceBelowTheGracefulTimeoutFailsTheRender(@TempDir Path dir) throws Exception {
    for (String grace : List.of("30", "65")) {
      Processes.Result failed =
          exec(template(null, "--set", "worker.terminationGracePeriodSeconds=" + grace));
      assertThat(failed.exitCode()).as(failed.output()).isNotZero();
      assertThat(failed.output())
          .contains(
              "worker.terminationGracePeriodSeconds ("
                  + grace
                  + ") must be at least worker.gracefulTimeoutSeconds (60) + 10");
    }
    Rendered enough = render(dir, "worker:\n  terminationGracePeriodSeconds: 70\n");
    assertThat(podSpec(enough.workers()).path("terminationGracePeriodSeconds").asInt())
        .isEqualTo(70);
  }

  @Test
  void mistakesInValuesFailTheRender() throws Exception {
    // A key the chart sets from its values, given again in settings.
    assertFails(
        template(null, "--set", "settings.faro\\.worker\\.graceful\\.timeout=10s"),
        "settings.faro.worker.graceful.timeout: the chart sets this key");
    // values.schema.json: a misspelt value, a key outside faro.*.
    assertFails(template(null, "--set", "worker.replica=5"), "replica");
    assertFails(template(null, "--set", "settings.spark\\.foo=1"), "spark.foo");
    // A secret too short for Faro.
    assertFails(
        template(null, "--set", "auth.clusterSecret=short"), "Faro takes secrets of 16 or more");
    // An upgrade that cannot read the Secret the chart made does not make new secrets.
    assertFails(template(null, "--is-upgrade"), "cannot read the");
  }

  private static void assertFails(List<String> command, String message) throws Exception {
    Processes.Result failed = exec(command);
    assertThat(failed.exitCode()).as(failed.output()).isNotZero();
    assertThat(failed.output()).contains(message);
  }

  @Test
  void authenticationCanBeTurnedOff(@TempDir Path dir) throws Exception {
    Rendered r = render(dir, "auth:\n  enabled: false\n");
    assertThat(r.all("Secret")).isEmpty();
    assertThat(r.settings())
        .containsEntry("faro.auth.enabled", "false")
        .doesNotContainKey("faro.auth.admin.secret.file");
    assertThat(mounts(container(r.workers()))).doesNotContainKey("secrets");
  }

  @Test
  void everyKeyTheChartSetsIsDocumented(@TempDir Path dir) throws Exception {
    String docs = Files.readString(deploy.resolve("../docs/configuration.md"));
    Set<String> keys = new TreeSet<>();
    for (Rendered r :
        List.of(
            render(dir.resolve("a"), null),
            render(dir.resolve("b"), OTHER_VALUES),
            render(dir.resolve("c"), "auth:\n  enabled: false\n"))) {
      keys.addAll(r.settings().keySet());
      for (JsonNode set : List.of(r.masters(), r.workers())) {
        Matcher m =
            Pattern.compile("--set \"?(faro\\.[a-z0-9.]+)=").matcher(commandLine(container(set)));
        while (m.find()) {
          keys.add(m.group(1));
        }
      }
    }
    assertThat(keys).contains("faro.master.id", "faro.worker.id", "faro.worker.host");
    for (String key : keys) {
      assertThat(docs).as("docs/configuration.md lists %s", key).contains("| `" + key + "` |");
    }
  }

  @Test
  void theChartRunsTheBuildsRelease() throws Exception {
    String chartYaml = Files.readString(chart.resolve("Chart.yaml"));
    assertThat(chartYaml)
        .contains("apiVersion: v2")
        .contains("appVersion: \"" + System.getProperty("faro.version") + "\"");
  }

  @Test
  void theSchemasRefuseUnknownAndMistypedFieldsAndUnknownKinds(@TempDir Path dir) throws Exception {
    Path bad = dir.resolve("bad.yaml");
    Files.writeString(
        bad,
        """
        apiVersion: apps/v1
        kind: StatefulSet
        metadata: {name: mistyped}
        spec:
          replicas: three
          serviceName: mistyped
          selector: {matchLabels: {a: b}}
          template:
            metadata: {labels: {a: b}}
            spec:
              containers:
                - name: c
                  image: i
                  prestop: {exec: {command: [sh]}}
        ---
        apiVersion: policy/v1
        kind: PodDisruptionBudget
        metadata: {name: budget}
        spec:
          maxUnavailable: one
          selector: {matchLabels: {a: b}}
          maxUnavailible: 1
        ---
        apiVersion: example.com/v1
        kind: Widget
        metadata: {name: unknown}
        """);
    Processes.Result result = validate(bad);
    assertThat(result.exitCode()).as(result.output()).isNotZero();
    assertThat(result.output())
        .contains("additional properties 'prestop' not allowed")
        .contains("at '/spec/replicas': got string, want integer")
        .contains("maxUnavailible")
        .contains("could not find schema for Widget")
        .contains("Valid: 0, Invalid: 2, Errors: 1");
  }

  private static boolean selects(JsonNode matchLabels, JsonNode labels) {
    assertThat(matchLabels.size()).isPositive();
    Iterator<Map.Entry<String, JsonNode>> fields = matchLabels.fields();
    while (fields.hasNext()) {
      Map.Entry<String, JsonNode> e = fields.next();
      if (!e.getValue().asText().equals(labels.path(e.getKey()).asText(null))) {
        return false;
      }
    }
    return true;
  }

  /** faro.master.raft.peers: one mN@stable-name:raft/rpc per master, in ordinal order. */
  private static void assertPeers(Map<String, String> settings, int replicas) {
    String raft = settings.get("faro.master.raft.port");
    String rpc = settings.get("faro.master.port");
    List<String> peers = List.of(settings.get("faro.master.raft.peers").split(","));
    List<String> endpoints = List.of(settings.get("faro.master.endpoints").split(","));
    assertThat(peers).hasSize(replicas);
    assertThat(endpoints).hasSize(replicas);
    for (int i = 0; i < replicas; i++) {
      String host = "faro-master-" + i + ".faro-master." + NAMESPACE + ".svc.cluster.local";
      assertThat(peers.get(i)).isEqualTo("m" + i + "@" + host + ":" + raft + "/" + rpc);
      assertThat(endpoints.get(i)).isEqualTo(host + ":" + rpc);
    }
  }

  private static void assertProbes(JsonNode container, String httpPort, String path) {
    int port = -1;
    for (JsonNode p : container.path("ports")) {
      if (p.path("name").asText().equals("http")) {
        port = p.path("containerPort").asInt();
      }
    }
    assertThat(port).isEqualTo(Integer.parseInt(httpPort));
    for (String probe : List.of("startupProbe", "readinessProbe", "livenessProbe")) {
      JsonNode get = container.path(probe).path("httpGet");
      assertThat(get.path("path").asText()).as(probe).isEqualTo(path);
      assertThat(get.path("port").asText()).as(probe).isEqualTo("http");
    }
  }

  private static String env(JsonNode container, String name) {
    for (JsonNode e : container.path("env")) {
      if (e.path("name").asText().equals(name)) {
        return e.path("value").asText();
      }
    }
    throw new AssertionError("no " + name + " in " + container.path("env"));
  }

  private static Map<String, String> mounts(JsonNode container) {
    Map<String, String> mounts = new LinkedHashMap<>();
    container
        .path("volumeMounts")
        .forEach(m -> mounts.put(m.path("name").asText(), m.path("mountPath").asText()));
    return mounts;
  }

  private static List<String> claims(JsonNode statefulSet) {
    List<String> names = new ArrayList<>();
    statefulSet
        .path("spec")
        .path("volumeClaimTemplates")
        .forEach(c -> names.add(c.path("metadata").path("name").asText()));
    return names;
  }

  private static JsonNode volume(JsonNode podSpec, String name) {
    for (JsonNode v : podSpec.path("volumes")) {
      if (v.path("name").asText().equals(name)) {
        return v;
      }
    }
    throw new AssertionError("no volume " + name + " in " + podSpec.path("volumes"));
  }
}
