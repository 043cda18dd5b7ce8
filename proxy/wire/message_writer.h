// Appends protocol messages to a buffer. begin() reserves the length word, end() back-patches it.
// A message larger than the limit makes the writer fail stickily: the caller checks ok() once.
//
// Contract:
//  * The length written by end() counts the length word and the body, not the type byte; it may
//    not exceed max_message_size (nor INT32_MAX). The check is made before bytes are appended.
//  * Misuse fails the writer too: begin() while a message is open, a field written outside
//    begin()/end(), end() without begin(), cstr() of a string containing NUL.
//  * On failure the message being written is removed from `out` (messages completed earlier
//    stay) and every later call is a no-op. ok() does not report a message left open.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sw::wire {

class MessageWriter {
 public:
  explicit MessageWriter(std::string& out, uint64_t max_message_size = 1ull << 30)
      : out_(out), max_(max_message_size) {}

  MessageWriter& begin(char type);  // typed message
  MessageWriter& begin_untyped();   // startup-phase packet (StartupMessage, SSLRequest, ...)
  MessageWriter& int8(uint8_t v);
  MessageWriter& int16(uint16_t v);
  MessageWriter& int32(uint32_t v);
  MessageWriter& cstr(std::string_view s);   // bytes + NUL terminator
  MessageWriter& bytes(std::string_view s);  // raw bytes, no terminator
  MessageWriter& end();

  bool ok() const { return ok_; }

 private:
  std::string& out_;
  uint64_t max_;
  bool reserve(uint64_t n);  // may n more bytes be appended to the open message? else fail()
  void fail();               // drop the open message, mark the writer failed

  size_t start_ = 0;  // offset of the length word of the open message
  bool open_ = false;
  bool typed_ = false;  // the open message has a type byte at start_ - 1
  bool ok_ = true;
};

}  // namespace sw::wire
