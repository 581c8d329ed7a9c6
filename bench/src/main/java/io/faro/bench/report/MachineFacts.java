package io.faro.bench.report;

import com.sun.management.OperatingSystemMXBean;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The machine a run measured, as this process sees it.
 *
 * @param cores processors available to this JVM
 * @param memoryBytes physical memory
 * @param cpuModel the "model name" of /proc/cpuinfo, or "unknown"
 * @param loadAverage the system's one-minute load average when detected (-1 where unknown): other
 *     work on the machine during a run shows here
 */
public record MachineFacts(
    int cores,
    long memoryBytes,
    String cpuModel,
    String os,
    String arch,
    String javaVersion,
    double loadAverage) {
  public static MachineFacts detect() {
    OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    return new MachineFacts(
        Runtime.getRuntime().availableProcessors(),
        os.getTotalMemorySize(),
        readCpuModel(),
        System.getProperty("os.name") + " " + System.getProperty("os.version"),
        System.getProperty("os.arch"),
        System.getProperty("java.version"),
        os.getSystemLoadAverage());
  }

  private static String readCpuModel() {
    try {
      List<String> lines = Files.readAllLines(Path.of("/proc/cpuinfo"));
      return lines.stream()
          .filter(l -> l.startsWith("model name"))
          .findFirst()
          .map(l -> l.substring(l.indexOf(':') + 1).trim())
          .orElse("unknown");
    } catch (IOException | RuntimeException e) {
      return "unknown";
    }
  }
}
