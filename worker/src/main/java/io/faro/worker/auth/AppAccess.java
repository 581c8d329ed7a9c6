package io.faro.worker.auth;

import io.faro.common.auth.Identity;
import io.faro.common.id.IdMapper;
import io.faro.common.id.ShuffleId;
import io.faro.proto.ShuffleKeyP;
import io.faro.worker.partition.PartitionStore;
import java.util.Optional;

/**
 * Who may act on a shuffle here, with faro.auth.enabled: a connection that proved the identity of
 * the shuffle's application and, once the shuffle was reserved by one registration of it, that
 * registration. The second part closes the gap between the masters forgetting an app and this
 * worker deleting its files: a new registration of the same app id (another nonce) reads nothing
 * left of the old one. A shuffle restored after a restart took no reservation since, so any
 * registration of its app may read it (the nonce is not persisted).
 */
public final class AppAccess {
  private AppAccess() {}

  /** Why {@code who} may not send {@code what} for shuffle {@code key}, or empty. */
  public static Optional<String> refusal(
      PartitionStore store, ShuffleKeyP key, Identity who, Object what) {
    String nonce;
    try {
      ShuffleId shuffle = IdMapper.shuffleId(key);
      nonce = store.appNonce(shuffle);
    } catch (RuntimeException e) {
      // A malformed id: no registration holds it; the app check below refuses it.
      nonce = "";
    }
    return Identity.requireApp(key.getAppId(), nonce, who, what);
  }

  /** The registration nonce a connection proved, or "" (auth off, or not an app). */
  public static String nonceOf(Identity who) {
    return who.kind() == Identity.Kind.APP ? who.nonce() : "";
  }
}
