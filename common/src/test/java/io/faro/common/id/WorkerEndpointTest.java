package io.faro.common.id;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.network.HostPort;
import org.junit.jupiter.api.Test;

class WorkerEndpointTest {
  @Test
  void eachPortHasItsAddress() {
    WorkerEndpoint endpoint = new WorkerEndpoint("worker-1", 9100, 9101, 9102);

    assertThat(endpoint.rpc()).isEqualTo(new HostPort("worker-1", 9100));
    assertThat(endpoint.push()).isEqualTo(new HostPort("worker-1", 9101));
    assertThat(endpoint.fetch()).isEqualTo(new HostPort("worker-1", 9102));
  }

  @Test
  void aPortOutOfRangeIsRefusedWhenItsAddressIsAskedFor() {
    WorkerEndpoint endpoint = new WorkerEndpoint("worker-1", 9100, 70_000, 9102);

    assertThat(endpoint.rpc().port()).isEqualTo(9100);
    assertThatThrownBy(endpoint::push)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("70000");
  }
}
