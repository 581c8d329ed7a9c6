package io.faro.common.id;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.network.HostPort;
import io.faro.common.network.RemoteException;
import io.faro.proto.ErrorResponse;
import io.faro.proto.ShuffleKeyP;
import org.junit.jupiter.api.Test;
import org.slf4j.helpers.MessageFormatter;

/**
 * Ids from the wire print safely wherever they are logged through toString; their values stay as
 * sent.
 */
class IdsInLogLinesTest {
  private static final String FORGED =
      "app-1\n2024-01-01 00:00:00.000 INFO  [main] MasterServer - forged line";

  private static String logLine(String format, Object... args) {
    return MessageFormatter.arrayFormat(format, args).getMessage();
  }

  @Test
  void anIdWithANewlineIsRefusedWithAMessageOnOneLine() {
    assertThatThrownBy(() -> new AppId(FORGED))
        .isInstanceOf(IllegalArgumentException.class)
        .message()
        .doesNotContain("\n")
        .contains("app-1?2024-01-01")
        .contains("control character");
  }

  @Test
  void anIdWithABidiOverridePrintsSafelyAndKeepsItsValue() {
    String sneaky = "app-1\u202Egnp.exe";
    AppId app = new AppId(sneaky);
    ShuffleId shuffle = new ShuffleId(app, 3);
    PartitionKey partition = new PartitionKey(shuffle, 7, 1);

    String line = logLine("Removing app {}, shuffle {}, partition {}", app, shuffle, partition);

    assertThat(line).doesNotContain("\u202E").contains("app-1?gnp.exe/3/p7e1");
    assertThat(app.value()).isEqualTo(sneaky);
    assertThat(app).isEqualTo(new AppId(sneaky));
  }

  @Test
  void aLongIdIsCutInLogLinesAndAnOverlongOneIsRefused() {
    WorkerId worker = new WorkerId("w".repeat(250));

    String line = logLine("Declaring worker {} lost: {}", worker, "no heartbeat");

    assertThat(line).hasSizeLessThan(300).contains("…(250 chars)").endsWith("lost: no heartbeat");
    assertThat(worker.value()).hasSize(250);
    assertThatThrownBy(() -> new WorkerId("w".repeat(20_000)))
        .message()
        .hasSizeLessThan(300)
        .contains("at most 255")
        .contains("…(20000 chars)");
  }

  @Test
  void errorsNamingABadIdFromTheWireAreSafeToo() {
    ShuffleKeyP key =
        ShuffleKeyP.newBuilder().setAppId("x\n".repeat(10_000)).setShuffleId(-1).build();

    assertThatThrownBy(() -> IdMapper.shuffleId(key))
        .isInstanceOfSatisfying(
            FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_REQUEST))
        .message()
        .doesNotContain("\n")
        .hasSizeLessThan(1000);
  }

  @Test
  void aRemoteErrorMessageIsCleanedAsItArrives() {
    ErrorResponse error =
        ErrorResponse.newBuilder()
            .setCode(ErrorCode.INVALID_REQUEST.toProto())
            .setMessage("bad\r\nINFO forged")
            .build();

    RemoteException e = new RemoteException(new HostPort("worker-1", 9100), error);

    assertThat(e.getMessage()).isEqualTo("worker-1:9100 answered: bad??INFO forged");
  }
}
