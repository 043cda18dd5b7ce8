// Frame reader: decides complete / need-more / error for the front of a byte buffer.
//
// Order of checks for a typed frame, each done as soon as the bytes it needs are present:
//   1. type byte (client frames only): must be a known frontend message type;
//   2. length word: 4 <= length <= INT32_MAX (the protocol's length is a signed int32);
//   3. length against the limit for that type, BEFORE asking for the body, so a peer can never
//      make us buffer more than the limit by announcing a huge length;
//   4. body: NeedMore until 1 + length bytes are buffered.
// All size arithmetic is 64-bit so no sum can wrap.
#include "wire/frame_reader.h"

#include "common/bytes.h"

namespace sw::wire {
namespace {

constexpr uint64_t kMaxLengthWord = 0x7fffffffu;  // int32 on the wire
constexpr size_t kTypedHeader = 5;                // type byte + int32 length
constexpr size_t kUntypedHeader = 4;              // int32 length

// Frontend message types and whether each is "small" (bounded by Limits::kMaxSmallMessage).
enum class ClientKind { Unknown, Small, Large };

ClientKind client_kind(char type) {
  switch (type) {
    case 'S':  // Sync
    case 'H':  // Flush
    case 'X':  // Terminate
    case 'C':  // Close
    case 'D':  // Describe
    case 'c':  // CopyDone
    case 'f':  // CopyFail
      return ClientKind::Small;
    case 'Q':  // Query
    case 'P':  // Parse
    case 'B':  // Bind
    case 'E':  // Execute
    case 'F':  // FunctionCall
    case 'd':  // CopyData
    case 'p':  // PasswordMessage / SASLInitialResponse / SASLResponse / GSSResponse
      return ClientKind::Large;
    default: return ClientKind::Unknown;
  }
}

// "'Q'" for printable bytes, "0x00" otherwise: the type byte comes from the peer.
std::string describe_type(char type) {
  const auto u = static_cast<unsigned char>(type);
  if (u >= 0x20 && u < 0x7f) return std::string("'") + type + "'";
  static constexpr char kHex[] = "0123456789abcdef";
  return std::string("0x") + kHex[u >> 4] + kHex[u & 0xf];
}

FrameResult need_more(size_t need) {
  FrameResult r;
  r.status = FrameStatus::NeedMore;
  r.need = need;
  return r;
}

FrameResult error(std::string message) {
  FrameResult r;
  r.status = FrameStatus::Error;
  r.error = std::move(message);
  return r;
}

FrameResult complete(char type, std::string_view input, size_t header, uint64_t total) {
  FrameResult r;
  r.status = FrameStatus::Complete;
  r.frame.type = type;
  r.frame.size = static_cast<size_t>(total);
  r.frame.body = input.substr(header, static_cast<size_t>(total) - header);
  return r;
}

}  // namespace

FrameResult read_frame(std::string_view input, Sender sender, const Limits& limits) {
  if (input.empty()) return need_more(kTypedHeader);
  const char type = input[0];

  uint64_t limit = limits.max_message_size;
  if (sender == Sender::Client) {
    const ClientKind kind = client_kind(type);
    if (kind == ClientKind::Unknown) {
      return error("invalid frontend message type " + describe_type(type));
    }
    if (kind == ClientKind::Small) limit = Limits::kMaxSmallMessage;
  }

  if (input.size() < kTypedHeader) return need_more(kTypedHeader);
  const uint64_t length = load_be32(input.data() + 1);
  if (length < 4) {
    return error("invalid message length " + std::to_string(length) + " for message type " +
                 describe_type(type) + " (minimum 4)");
  }
  if (length > kMaxLengthWord || length > limit) {
    return error("invalid message length " + std::to_string(length) + " for message type " +
                 describe_type(type) + " (limit " +
                 std::to_string(limit < kMaxLengthWord ? limit : kMaxLengthWord) + ")");
  }

  const uint64_t total = 1 + length;  // type byte + length word + body
  if (input.size() < total) return need_more(static_cast<size_t>(total));
  return complete(type, input, kTypedHeader, total);
}

FramePeek peek_frame(std::string_view input) {
  FramePeek peek;
  if (input.size() < kTypedHeader) return peek;
  peek.type = input[0];
  const uint64_t length = load_be32(input.data() + 1);
  peek.malformed = length < 4;
  peek.size = 1 + length;
  return peek;
}

FrameResult read_startup_packet(std::string_view input) {
  if (input.size() < kUntypedHeader) return need_more(kUntypedHeader);
  const uint64_t length = load_be32(input.data());
  if (length < 8 || length > Limits::kMaxStartupPacket) {
    return error("invalid length of startup packet: " + std::to_string(length) + " (must be 8.." +
                 std::to_string(Limits::kMaxStartupPacket) + ")");
  }
  if (input.size() < length) return need_more(static_cast<size_t>(length));
  return complete(0, input, kUntypedHeader, length);
}

}  // namespace sw::wire
