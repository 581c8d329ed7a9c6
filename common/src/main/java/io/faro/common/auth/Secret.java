package io.faro.common.auth;

import io.faro.common.config.ConfigException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A shared secret, read from a file. Never printed: {@link #toString()} says only that it is one.
 * The file holds the secret as text (surrounding whitespace ignored), at least {@value #MIN_BYTES}
 * bytes; {@code openssl rand -hex 32} makes one. A file that others than its owner may read is
 * accepted with a warning.
 */
public final class Secret {
  private static final Logger LOG = LoggerFactory.getLogger(Secret.class);

  /** Fewest bytes a secret may have: shorter ones can be guessed. */
  public static final int MIN_BYTES = 16;

  /** Largest secret file read. */
  private static final long MAX_FILE_BYTES = 4096;

  private static final SecureRandom RANDOM = new SecureRandom();

  private final byte[] bytes;

  private Secret(byte[] bytes) {
    this.bytes = bytes;
  }

  /** A secret given as text (tests, tools); at least {@value #MIN_BYTES} bytes. */
  public static Secret of(String text) {
    byte[] bytes = text.strip().getBytes(StandardCharsets.UTF_8);
    if (bytes.length < MIN_BYTES) {
      throw new IllegalArgumentException(
          "a secret needs at least " + MIN_BYTES + " bytes, got " + bytes.length);
    }
    return new Secret(bytes);
  }

  /** A secret of raw bytes (derived ones, and those a registration answer carries). */
  public static Secret ofBytes(byte[] bytes) {
    if (bytes.length < MIN_BYTES) {
      throw new IllegalArgumentException(
          "a secret needs at least " + MIN_BYTES + " bytes, got " + bytes.length);
    }
    return new Secret(bytes.clone());
  }

  /** The secret's bytes, for the one message that carries an app's secret to its driver. */
  public byte[] toBytes() {
    return bytes.clone();
  }

  /**
   * Reads the secret in {@code file}, which {@code key} names.
   *
   * @throws ConfigException naming {@code key} when the file is missing, unreadable, too large or
   *     holds too short a secret
   */
  public static Secret read(Path file, String key) {
    byte[] raw;
    try {
      long size = Files.size(file);
      if (size > MAX_FILE_BYTES) {
        throw new ConfigException(
            key + ": " + file + " has " + size + " bytes, a secret file at most " + MAX_FILE_BYTES);
      }
      raw = Files.readAllBytes(file);
    } catch (IOException e) {
      throw new ConfigException(key + ": cannot read the secret file " + file + ": " + e);
    }
    String text;
    try {
      // Text only: a binary file decoded leniently would lose bytes to replacement characters.
      text =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(raw))
              .toString();
    } catch (CharacterCodingException e) {
      throw new ConfigException(
          key + ": " + file + " is not text; write the secret as text (e.g. openssl rand -hex 32)");
    } finally {
      Arrays.fill(raw, (byte) 0);
    }
    byte[] bytes = text.strip().getBytes(StandardCharsets.UTF_8);
    if (bytes.length < MIN_BYTES) {
      throw new ConfigException(
          key
              + ": the secret in "
              + file
              + " has "
              + bytes.length
              + " bytes, at least "
              + MIN_BYTES
              + " are needed (e.g. openssl rand -hex 32 > "
              + file
              + ")");
    }
    warnIfShared(file, key, "secret file");
    return new Secret(bytes);
  }

  /** Writes a new random secret to {@code file}, readable by its owner only. */
  public static Secret writeNew(Path file) throws IOException {
    byte[] random = new byte[32];
    RANDOM.nextBytes(random);
    String text = HexFormat.of().formatHex(random);
    Files.deleteIfExists(file);
    try {
      Files.createFile(
          file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    } catch (UnsupportedOperationException e) {
      Files.createFile(file);
    }
    Files.writeString(file, text + "\n");
    return of(text);
  }

  /**
   * Warns (naming {@code key}) when {@code file}, which holds something only its owner may read (a
   * secret, a private key), is readable by others.
   */
  public static void warnIfShared(Path file, String key, String what) {
    try {
      Set<PosixFilePermission> perms = Files.getPosixFilePermissions(file);
      if (perms.contains(PosixFilePermission.GROUP_READ)
          || perms.contains(PosixFilePermission.OTHERS_READ)) {
        LOG.warn(
            "{}: the {} {} is readable by others than its owner ({}); chmod 600 it",
            key,
            what,
            file,
            PosixFilePermissions.toString(perms));
      }
    } catch (IOException | UnsupportedOperationException e) {
      // Not a POSIX file system: nothing to check.
    }
  }

  byte[] bytes() {
    return bytes;
  }

  @Override
  public String toString() {
    return "Secret(" + bytes.length + " bytes, not shown)";
  }
}
