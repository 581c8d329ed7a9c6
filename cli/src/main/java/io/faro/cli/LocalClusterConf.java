package io.faro.cli;

import io.faro.common.auth.AuthOptions;
import io.faro.common.auth.Secret;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * What a local cluster takes from its settings file besides passing it to every member: the secrets
 * the members authenticate with (made in the work directory unless the file turns authentication
 * off or names its own), and the settings its Spark jobs take as spark.faro.*.
 */
final class LocalClusterConf {
  /** The members' authentication settings, and the admin conf to point operators at (or null). */
  record Auth(List<String> settings, Path adminConf) {}

  private LocalClusterConf() {}

  /**
   * The authentication every member gets. Unless the settings file turns it off or names its own
   * cluster secret, a cluster secret and an admin secret are made in {@code <work-dir>/secrets}
   * (readable by this user only) and named to every member; {@code <work-dir>/admin.conf} names the
   * admin secret for {@code bin/faro admin --conf}. Returns the members' settings, and the admin
   * conf (null when there is none to write).
   */
  static Auth auth(Path dir, Path confFile) throws IOException {
    Properties p = load(confFile);
    String enabled = p.getProperty(AuthOptions.ENABLED.key(), "true").trim();
    Path adminConf = dir.resolve(LocalCluster.ADMIN_CONF);
    Files.deleteIfExists(adminConf);
    if (enabled.equalsIgnoreCase("false")) {
      return new Auth(List.of(), null);
    }
    String ownAdmin = p.getProperty(AuthOptions.ADMIN_SECRET_FILE.key(), "").trim();
    if (!p.getProperty(AuthOptions.CLUSTER_SECRET_FILE.key(), "").isBlank()) {
      if (ownAdmin.isEmpty()) {
        return new Auth(List.of(), null);
      }
      Files.writeString(adminConf, AuthOptions.ADMIN_SECRET_FILE.key() + "=" + ownAdmin + "\n");
      return new Auth(List.of(), adminConf);
    }
    Path secrets = dir.resolve("secrets");
    Files.createDirectories(secrets);
    try {
      Files.setPosixFilePermissions(secrets, PosixFilePermissions.fromString("rwx------"));
    } catch (UnsupportedOperationException e) {
      // Not a POSIX file system: the files' own permissions are all there is.
    }
    Path cluster = secrets.resolve("cluster.secret");
    Path admin = secrets.resolve("admin.secret");
    Secret.writeNew(cluster);
    Secret.writeNew(admin);
    Files.writeString(adminConf, AuthOptions.ADMIN_SECRET_FILE.key() + "=" + admin + "\n");
    return new Auth(
        List.of(
            AuthOptions.CLUSTER_SECRET_FILE.key() + "=" + cluster,
            AuthOptions.ADMIN_SECRET_FILE.key() + "=" + admin),
        adminConf);
  }

  /**
   * The faro.client.* and faro.tls.* settings of a settings file, which Spark jobs take as
   * spark.faro.*.
   */
  static Map<String, String> clientSettings(Path confFile) throws IOException {
    Map<String, String> client = new TreeMap<>();
    Properties p = load(confFile);
    p.stringPropertyNames().stream()
        // Not the provider: Spark's executors carry no OpenSSL, whatever the members use.
        .filter(
            k ->
                k.startsWith("faro.client.")
                    || (k.startsWith("faro.tls.") && !k.equals("faro.tls.provider")))
        .forEach(k -> client.put(k, p.getProperty(k).trim()));
    return client;
  }

  private static Properties load(Path confFile) throws IOException {
    Properties p = new Properties();
    if (confFile != null) {
      try (Reader r = Files.newBufferedReader(confFile)) {
        p.load(r);
      }
    }
    return p;
  }
}
