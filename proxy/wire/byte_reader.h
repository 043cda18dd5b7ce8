// The one bounds-checked reader of wire-format bytes (big-endian integers, NUL-terminated strings,
// counted byte runs), used by every decoder of the proxy: protocol messages, Bind parameter
// values, the pgoutput replication stream and binary COPY data.
//
// Contract: never throws and never reads past the end. A read that the remaining bytes cannot
// satisfy returns false, consumes nothing and marks the reader truncated; from then on every read
// fails (a decoder checks once at the end, or after each field to say which one was missing).
// Views returned point into the bytes passed in, which must outlive them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace sw::wire {

class ByteReader {
 public:
  explicit ByteReader(std::string_view data) : data_(data) {}

  bool u8(uint8_t& out) {
    if (!take(1)) return false;
    out = static_cast<uint8_t>(data_[pos_ - 1]);
    return true;
  }
  bool byte(char& out) {
    if (!take(1)) return false;
    out = data_[pos_ - 1];
    return true;
  }
  bool u16(uint16_t& out) {
    if (!take(2)) return false;
    out = static_cast<uint16_t>(be(2));
    return true;
  }
  bool u32(uint32_t& out) {
    if (!take(4)) return false;
    out = static_cast<uint32_t>(be(4));
    return true;
  }
  bool u64(uint64_t& out) {
    if (!take(8)) return false;
    out = be(8);
    return true;
  }
  // Two's complement, as PostgreSQL sends int2/int4/int8.
  bool i16(int16_t& out) { return as_signed<uint16_t>(out); }
  bool i32(int32_t& out) { return as_signed<uint32_t>(out); }
  bool i64(int64_t& out) { return as_signed<uint64_t>(out); }

  // A string terminated by NUL inside the data; `out` excludes the NUL, which is consumed.
  bool cstr(std::string_view& out) {
    if (truncated_) return false;
    const void* nul = remaining() == 0 ? nullptr : std::memchr(data_.data() + pos_, '\0', remaining());
    if (nul == nullptr) return fail();
    const auto end = static_cast<size_t>(static_cast<const char*>(nul) - data_.data());
    out = data_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return true;
  }
  // The next `n` bytes (n as read from the wire: any 64-bit count is safe).
  bool bytes(uint64_t n, std::string_view& out) {
    if (!take(n)) return false;
    out = data_.substr(pos_ - static_cast<size_t>(n), static_cast<size_t>(n));
    return true;
  }
  bool skip(uint64_t n) { return take(n); }
  // Everything not read yet (empty once truncated).
  std::string_view rest() {
    if (truncated_) return {};
    std::string_view r = data_.substr(pos_);
    pos_ = data_.size();
    return r;
  }

  size_t remaining() const { return data_.size() - pos_; }
  size_t position() const { return pos_; }
  bool at_end() const { return !truncated_ && pos_ == data_.size(); }
  // Some read asked for more than was there.
  bool truncated() const { return truncated_; }

 private:
  bool fail() {
    truncated_ = true;
    return false;
  }
  bool take(uint64_t n) {
    if (truncated_ || n > remaining()) return fail();
    pos_ += static_cast<size_t>(n);
    return true;
  }
  // The `n` bytes just taken, big-endian.
  uint64_t be(size_t n) const {
    const auto* p = reinterpret_cast<const unsigned char*>(data_.data() + pos_ - n);
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | p[i];
    return v;
  }
  template <typename Unsigned, typename Signed>
  bool as_signed(Signed& out) {
    Unsigned u = 0;
    bool ok = false;
    if constexpr (sizeof(Unsigned) == 2) ok = u16(u);
    if constexpr (sizeof(Unsigned) == 4) ok = u32(u);
    if constexpr (sizeof(Unsigned) == 8) ok = u64(u);
    if (ok) out = static_cast<Signed>(u);
    return ok;
  }

  std::string_view data_;
  size_t pos_ = 0;
  bool truncated_ = false;
};

}  // namespace sw::wire
