package io.faro.common.network;

/** The second field of every frame. Values are part of the wire format. */
public enum FrameKind {
  REQUEST((byte) 1),
  RESPONSE((byte) 2),
  ERROR((byte) 3);

  private final byte wire;

  FrameKind(byte wire) {
    this.wire = wire;
  }

  public byte wire() {
    return wire;
  }

  /** Returns null for an unknown value; the decoder turns that into a corrupt-frame error. */
  static FrameKind fromWire(byte b) {
    return switch (b) {
      case 1 -> REQUEST;
      case 2 -> RESPONSE;
      case 3 -> ERROR;
      default -> null;
    };
  }
}
