package io.faro.common.config;

import java.util.List;

/**
 * The configuration keys one module declares, found with {@link java.util.ServiceLoader} (listed in
 * {@code META-INF/services/io.faro.common.config.ConfigOptionGroup}) so that {@link KnownKeys} can
 * tell a misspelt key from another module's: every process reads the same faro-defaults.conf, and
 * common cannot name the modules above it.
 *
 * <p>Implementations are public classes with a public no-argument constructor.
 */
public interface ConfigOptionGroup {
  /** Every option the module declares. */
  List<ConfigOption<?>> options();

  /**
   * Key prefixes whose every key this module declares (e.g. {@code "faro.worker."}): a key under
   * one that is not declared is unknown. A key under a prefix of a module this process did not load
   * cannot be judged and is let through (see {@link KnownKeys#MODULE_NAMESPACES}).
   */
  List<String> namespaces();
}
