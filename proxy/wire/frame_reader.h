// Incremental frame reader for the PostgreSQL v3 protocol. Pure: it looks at bytes the caller
// has buffered and says whether a whole frame is there, how many more bytes are needed, or that
// the input is a protocol violation. It never touches a socket and never copies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sw::wire {

// Size limits checked before a length is trusted (docs/architecture.md §4.1).
struct Limits {
  static constexpr uint32_t kMaxStartupPacket = 10000;
  static constexpr uint32_t kMaxSmallMessage = 10000;
  uint64_t max_message_size = 256ull << 20;  // Query/Parse/Bind/CopyData/... and server messages
};

enum class FrameStatus { Complete, NeedMore, Error };

struct Frame {
  char type = 0;          // message type byte; 0 for startup-phase packets (no type byte)
  std::string_view body;  // payload after the length word
  size_t size = 0;        // bytes the whole frame occupies in the input (type+length+body)
};

struct FrameResult {
  FrameStatus status = FrameStatus::NeedMore;
  Frame frame;        // valid when Complete
  size_t need = 0;    // when NeedMore: minimum total input size that may complete it
  std::string error;  // when Error: message for an 08P01 ErrorResponse
};

// Which side sent the bytes: limits differ (a client's Sync is small; a server's DataRow is not).
enum class Sender { Client, Server };

// Reads one typed frame ("T" + int32 length + body) from the front of `input`.
// Client frames: type must be a known frontend message; Sync/Terminate/Close/Describe/Flush/
// CopyDone/CopyFail... (everything but Query/Parse/Bind/Execute/FunctionCall/CopyData/
// PasswordMessage family) <= kMaxSmallMessage; the rest <= limits.max_message_size.
// Server frames: any type byte, <= limits.max_message_size. Length < 4 is always an error.
FrameResult read_frame(std::string_view input, Sender sender, const Limits& limits);

// The type and whole size (type byte, length word, body) of the frame at the front of `input`,
// from its header alone: nothing is checked but that the header is there and the length word is
// at least 4, for a walk over frames that read_frame checks before any is used (it costs no
// FrameResult). `size` is 0 when the header is incomplete, `malformed` set when the length word is
// below 4. The body may not all be buffered yet: compare `size` with the input's.
struct FramePeek {
  char type = 0;
  uint64_t size = 0;
  bool malformed = false;
};
FramePeek peek_frame(std::string_view input);

// Reads one untyped startup-phase packet (int32 length + body), <= kMaxStartupPacket, >= 8.
FrameResult read_startup_packet(std::string_view input);

}  // namespace sw::wire
