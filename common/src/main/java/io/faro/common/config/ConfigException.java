package io.faro.common.config;

/** A configuration value that cannot be used; the message names the key and what is allowed. */
public final class ConfigException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public ConfigException(String message) {
    super(message);
  }
}
