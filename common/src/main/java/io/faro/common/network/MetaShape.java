package io.faro.common.network;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.WireFormat;
import java.io.IOException;

/**
 * Counts the objects protobuf would make of a frame's meta, without making them, so that a decoder
 * can refuse a meta before it is parsed.
 *
 * <p>Parsing allocates one object per embedded message, string, bytes field and unknown field,
 * whatever its size on the wire: an empty element of a repeated message field is 2 bytes there and
 * some 40 on the heap, so 120 MiB of them cost gigabytes. Packed and unpacked scalars are not
 * counted: protobuf keeps repeated ones in primitive arrays, a few bytes per wire byte at most.
 *
 * <p>The walk follows the message's descriptor, reads only tags and lengths, and stops at the first
 * count over the limit. Nesting deeper than {@link #MAX_DEPTH} (protobuf's own recursion limit is
 * 100; no Faro message nests beyond 4) and groups (never used by Faro) are refused as malformed.
 * Stateless and thread-safe.
 */
final class MetaShape {
  /** Deepest nesting of embedded messages accepted. */
  static final int MAX_DEPTH = 16;

  /** A meta refused before it was parsed. */
  static final class Refused extends Exception {
    private final boolean tooMany;

    Refused(String message, boolean tooMany) {
      super(message, null, false, false);
      this.tooMany = tooMany;
    }

    /** True when the meta holds too many objects; false when it is malformed. */
    boolean tooMany() {
      return tooMany;
    }
  }

  private MetaShape() {}

  /**
   * Checks that {@code meta}, a serialized {@code type}, holds at most {@code limit} objects.
   *
   * @throws Refused when it holds more, nests too deep, or is not well-formed protobuf
   */
  static int check(Descriptor type, byte[] meta, int limit) throws Refused {
    CodedInputStream in = CodedInputStream.newInstance(meta);
    int[] count = {0};
    try {
      walk(in, type, limit, count, 0);
    } catch (IOException | IllegalArgumentException e) {
      throw new Refused("malformed " + type.getName() + ": " + e.getMessage(), false);
    }
    return count[0];
  }

  private static void walk(CodedInputStream in, Descriptor type, int limit, int[] count, int depth)
      throws IOException, Refused {
    if (depth > MAX_DEPTH) {
      throw new Refused(type.getName() + " nests deeper than " + MAX_DEPTH + " levels", false);
    }
    while (true) {
      int tag = in.readTag();
      if (tag == 0) {
        return;
      }
      int wireType = WireFormat.getTagWireType(tag);
      if (wireType == WireFormat.WIRETYPE_START_GROUP
          || wireType == WireFormat.WIRETYPE_END_GROUP) {
        throw new Refused(type.getName() + " holds a group, which no Faro message has", false);
      }
      FieldDescriptor field = type.findFieldByNumber(WireFormat.getTagFieldNumber(tag));
      boolean object =
          field == null
              || (wireType == WireFormat.WIRETYPE_LENGTH_DELIMITED
                  && (field.getJavaType() == FieldDescriptor.JavaType.MESSAGE
                      || field.getJavaType() == FieldDescriptor.JavaType.STRING
                      || field.getJavaType() == FieldDescriptor.JavaType.BYTE_STRING));
      if (object && ++count[0] > limit) {
        throw new Refused(type.getName() + " holds more than " + limit + " objects", true);
      }
      if (field != null
          && field.getJavaType() == FieldDescriptor.JavaType.MESSAGE
          && wireType == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
        int length = in.readRawVarint32();
        if (length < 0) {
          throw new Refused(type.getName() + " has a negative length", false);
        }
        int outer = in.pushLimit(length);
        walk(in, field.getMessageType(), limit, count, depth + 1);
        in.checkLastTagWas(0);
        in.popLimit(outer);
      } else if (!in.skipField(tag)) {
        return;
      }
    }
  }
}
