package io.faro.worker.testing;

import io.faro.common.config.FaroConf;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Configuration of a worker under test: loopback, ephemeral ports, small sizes, fast heartbeats.
 */
public final class TestWorkers {
  private TestWorkers() {}

  public static FaroConf conf(String masterEndpoint, Path... dirs) {
    Map<String, String> values = new TreeMap<>();
    values.put("faro.master.endpoints", masterEndpoint);
    values.put("faro.master.client.retry.timeout", "5s");
    values.put("faro.network.io.threads", "2");
    // These tests push, commit and fetch with raw clients that prove no app: authentication, on
    // by default, is tested where applications register (ClusterAuthTest, AuthIT, WireFuzzIT).
    values.put("faro.auth.enabled", "false");
    values.put("faro.worker.host", "127.0.0.1");
    values.put("faro.worker.bind.host", "127.0.0.1");
    values.put("faro.worker.rpc.port", "0");
    values.put("faro.worker.push.port", "0");
    values.put("faro.worker.fetch.port", "0");
    values.put("faro.worker.http.port", "0");
    values.put("faro.worker.heartbeat.interval", "100ms");
    values.put("faro.worker.flush.buffer.size", "8k");
    values.put("faro.worker.chunk.size", "16k");
    // Tests must not depend on the free space of the machine they run on.
    for (String tier : List.of("nvme", "ssd", "hdd")) {
      values.put("faro.worker.tier." + tier + ".reserve", "0");
    }
    StringBuilder dirList = new StringBuilder();
    for (int i = 0; i < dirs.length; i++) {
      dirList.append(i == 0 ? "" : ",").append(dirs[i]).append(i % 2 == 0 ? ":ssd" : ":hdd");
    }
    values.put("faro.worker.dirs", dirList.toString());
    return FaroConf.of(values);
  }
}
