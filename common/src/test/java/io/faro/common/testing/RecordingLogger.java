package io.faro.common.testing;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.AbstractLogger;
import org.slf4j.helpers.MessageFormatter;

/**
 * An slf4j logger that keeps every line as slf4j would format it ("WARN message"), for assertions.
 */
public final class RecordingLogger extends AbstractLogger {
  private static final long serialVersionUID = 1L;
  private final List<String> lines = Collections.synchronizedList(new ArrayList<>());
  private final List<Throwable> throwables = Collections.synchronizedList(new ArrayList<>());

  public RecordingLogger() {
    this.name = "recording";
  }

  /** Every line logged so far, as "LEVEL message". */
  public List<String> lines() {
    return List.copyOf(lines);
  }

  /** The throwables logged with the lines, in order. */
  public List<Throwable> throwables() {
    return List.copyOf(throwables);
  }

  @Override
  protected String getFullyQualifiedCallerName() {
    return null;
  }

  @Override
  protected void handleNormalizedLoggingCall(
      Level level, Marker marker, String messagePattern, Object[] arguments, Throwable throwable) {
    lines.add(level + " " + MessageFormatter.basicArrayFormat(messagePattern, arguments));
    if (throwable != null) {
      throwables.add(throwable);
    }
  }

  @Override
  public boolean isTraceEnabled() {
    return true;
  }

  @Override
  public boolean isTraceEnabled(Marker marker) {
    return true;
  }

  @Override
  public boolean isDebugEnabled() {
    return true;
  }

  @Override
  public boolean isDebugEnabled(Marker marker) {
    return true;
  }

  @Override
  public boolean isInfoEnabled() {
    return true;
  }

  @Override
  public boolean isInfoEnabled(Marker marker) {
    return true;
  }

  @Override
  public boolean isWarnEnabled() {
    return true;
  }

  @Override
  public boolean isWarnEnabled(Marker marker) {
    return true;
  }

  @Override
  public boolean isErrorEnabled() {
    return true;
  }

  @Override
  public boolean isErrorEnabled(Marker marker) {
    return true;
  }
}
