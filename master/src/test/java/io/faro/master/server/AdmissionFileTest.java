package io.faro.master.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.testing.Eventually;
import io.faro.master.MasterServerOptions;
import io.faro.master.testing.MasterFixture;
import io.faro.master.testing.Requests;
import io.faro.proto.AdmissionRulesRequest;
import io.faro.proto.AdmissionRulesResponse;
import io.faro.proto.SetAdmissionRulesRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * faro.master.admission.file: the leader replicates the file's rules, and again when it changes; a
 * file that does not parse leaves the rules as they were; operators' rules are refused, naming the
 * file.
 */
class AdmissionFileTest {
  @TempDir Path dir;

  private static AdmissionRulesResponse rules(MasterFixture master) {
    return master.call(AdmissionRulesRequest.getDefaultInstance(), AdmissionRulesResponse.class);
  }

  @Test
  void theLeaderReplicatesTheFilesRulesAndTheirChanges() throws Exception {
    Path file = dir.resolve("admission.conf");
    Files.writeString(file, "deny user=guest   # no guests\n");
    try (MasterFixture master =
        MasterFixture.start(
            MasterFixture.conf(dir.resolve("m"))
                .with(MasterServerOptions.ADMISSION_FILE, file.toString()))) {
      Eventually.await(
          "the file's rules",
          Duration.ofSeconds(10),
          () -> rules(master).getRules(),
          r -> r.equals("deny user=guest\n"));
      assertThat(rules(master).getSource()).isEqualTo("file " + file);
      Throwable refused =
          catchThrowable(() -> master.call(Requests.registerApp("app-1", "guest", "x")));
      assertThat(((FaroException) refused).code()).isEqualTo(ErrorCode.ADMISSION_REFUSED);

      Files.writeString(file, "deny user=guest\ndeny name=adhoc-*\n");
      Eventually.await(
          "the changed rules",
          Duration.ofSeconds(10),
          () -> rules(master).getRules(),
          r -> r.equals("deny user=guest\ndeny name=adhoc-*\n"));

      // A typo: once the leader read it, the rules are still those before.
      Files.writeString(file, "deny usr=guest\n");
      Eventually.await(
          "the bad file read",
          Duration.ofSeconds(10),
          () -> master.server().metrics().text(),
          m -> m.matches("(?s).*\nfaro_master_admission_file_rejected(_total)? 1(\\.0)?\n.*"));
      assertThat(rules(master).getRules()).isEqualTo("deny user=guest\ndeny name=adhoc-*\n");

      Throwable set =
          catchThrowable(
              () ->
                  master.call(
                      SetAdmissionRulesRequest.newBuilder().setRules("").build(),
                      AdmissionRulesResponse.class));
      assertThat(set)
          .hasMessageContaining("reads its admission rules from " + file)
          .hasMessageContaining("faro.master.admission.file");

      // Emptied: every application is admitted.
      Files.writeString(file, "");
      Eventually.await(
          "no rules", Duration.ofSeconds(10), () -> rules(master).getRules(), String::isEmpty);
      master.call(Requests.registerApp("app-2", "guest", "x"));
    }
  }
}
