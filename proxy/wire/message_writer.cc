// MessageWriter: appends length-prefixed messages to a caller-owned buffer (contract in the
// header). Every size sum is done in 64 bits before anything is appended, so a huge payload is
// never copied and nothing wraps.
#include "wire/message_writer.h"

#include "common/bytes.h"

namespace sw::wire {
namespace {
constexpr uint64_t kMaxLengthWord = 0x7fffffffu;  // the length is a signed int32 on the wire
constexpr uint32_t kLengthWordSize = 4;
}  // namespace

void MessageWriter::fail() {
  if (open_) {
    const size_t message_start = typed_ ? start_ - 1 : start_;
    if (message_start <= out_.size()) out_.resize(message_start);
    open_ = false;
  }
  ok_ = false;
}

bool MessageWriter::reserve(uint64_t n) {
  if (!ok_) return false;
  if (!open_) {
    fail();
    return false;
  }
  const uint64_t length = uint64_t{out_.size() - start_} + n;
  if (length > max_ || length > kMaxLengthWord) {
    fail();
    return false;
  }
  return true;
}

MessageWriter& MessageWriter::begin(char type) {
  if (!ok_) return *this;
  if (open_) {
    fail();
    return *this;
  }
  out_.push_back(type);
  start_ = out_.size();
  out_.append(kLengthWordSize, '\0');
  open_ = true;
  typed_ = true;
  if (max_ < kLengthWordSize) fail();
  return *this;
}

MessageWriter& MessageWriter::begin_untyped() {
  if (!ok_) return *this;
  if (open_) {
    fail();
    return *this;
  }
  start_ = out_.size();
  out_.append(kLengthWordSize, '\0');
  open_ = true;
  typed_ = false;
  if (max_ < kLengthWordSize) fail();
  return *this;
}

MessageWriter& MessageWriter::int8(uint8_t v) {
  if (reserve(1)) out_.push_back(static_cast<char>(v));
  return *this;
}

MessageWriter& MessageWriter::int16(uint16_t v) {
  if (reserve(2)) append_be16(out_, v);
  return *this;
}

MessageWriter& MessageWriter::int32(uint32_t v) {
  if (reserve(4)) append_be32(out_, v);
  return *this;
}

MessageWriter& MessageWriter::cstr(std::string_view s) {
  if (!ok_) return *this;
  if (s.find('\0') != std::string_view::npos) {
    fail();  // the receiver would read a shorter string and misparse the rest
    return *this;
  }
  if (reserve(uint64_t{s.size()} + 1)) {
    out_.append(s);
    out_.push_back('\0');
  }
  return *this;
}

MessageWriter& MessageWriter::bytes(std::string_view s) {
  if (reserve(s.size())) out_.append(s);
  return *this;
}

MessageWriter& MessageWriter::end() {
  if (!ok_) return *this;
  if (!open_) {
    fail();
    return *this;
  }
  store_be32(out_.data() + start_, static_cast<uint32_t>(out_.size() - start_));
  open_ = false;
  return *this;
}

}  // namespace sw::wire
