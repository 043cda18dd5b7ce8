// ByteReader: big-endian integers of each width and sign, NUL-terminated strings, counted runs,
// and the truncation contract (a failed read consumes nothing and every later read fails), with
// every read over exact-size heap copies so ASan reports a read past the end.
#include "wire/byte_reader.h"

#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <string>

namespace sw::wire {
namespace {
using namespace std::string_literals;

// An exact-size heap copy: a read one byte too far is an ASan report, not a silent success.
struct Exact {
  explicit Exact(const std::string& s) : bytes(new char[s.size() + (s.empty() ? 1 : 0)]), size(s.size()) {
    if (!s.empty()) std::memcpy(bytes.get(), s.data(), s.size());
  }
  std::string_view view() const { return {bytes.get(), size}; }
  std::unique_ptr<char[]> bytes;
  size_t size;
};

TEST_CASE("integers are big-endian, signed ones two's complement") {
  Exact data("\x01\xfe\xff\xfe\x80\x00\x00\x01\xff\xff\xff\xff\x00\x00\x00\x00\x00\x00\x01\x00"s);
  ByteReader r(data.view());
  uint8_t u8 = 0;
  int16_t i16 = 0;
  uint32_t u32 = 0;
  int32_t i32 = 0;
  uint64_t u64 = 0;
  CHECK(r.u8(u8));
  CHECK(u8 == 1);
  CHECK(r.i16(i16));
  CHECK(i16 == -257);  // 0xfeff
  CHECK(r.u32(u32));
  CHECK(u32 == 0xfe800000u);
  CHECK(r.i32(i32));
  CHECK(i32 == 0x01ffffff);
  CHECK(r.remaining() == 9);
  std::string_view skipped;
  CHECK(r.bytes(1, skipped));
  CHECK(skipped == "\xff"s);
  CHECK(r.u64(u64));
  CHECK(u64 == 0x100);
  CHECK(r.at_end());
  CHECK_FALSE(r.truncated());
}

TEST_CASE("i64 and u16 of extreme values") {
  Exact data("\x80\x00\x00\x00\x00\x00\x00\x00\xff\xff"s);
  ByteReader r(data.view());
  int64_t i64 = 0;
  uint16_t u16 = 0;
  CHECK(r.i64(i64));
  CHECK(i64 == INT64_MIN);
  CHECK(r.u16(u16));
  CHECK(u16 == 0xffff);
  CHECK(r.at_end());
}

TEST_CASE("cstr stops at the first NUL and needs one") {
  Exact data("ab\0\0c"s);
  ByteReader r(data.view());
  std::string_view s;
  CHECK(r.cstr(s));
  CHECK(s == "ab");
  CHECK(r.cstr(s));
  CHECK(s.empty());
  CHECK(r.position() == 4);
  CHECK_FALSE(r.cstr(s));  // "c" has no terminator
  CHECK(r.truncated());
  CHECK(r.position() == 4);
}

TEST_CASE("cstr of empty data fails without reading") {
  ByteReader r(std::string_view{});
  std::string_view s = "unchanged";
  CHECK_FALSE(r.cstr(s));
  CHECK(s == "unchanged");
  CHECK(r.truncated());
  CHECK_FALSE(r.at_end());
}

TEST_CASE("every integer read of every truncation fails, consumes nothing and sticks") {
  const std::string full = "\x01\x02\x03\x04\x05\x06\x07\x08"s;
  for (size_t size = 0; size < full.size(); ++size) {
    CAPTURE(size);
    Exact data(full.substr(0, size));
    uint8_t u8 = 0;
    uint16_t u16 = 0;
    uint32_t u32 = 0;
    uint64_t u64 = 0;
    ByteReader r64(data.view());
    CHECK_FALSE(r64.u64(u64));
    CHECK(r64.position() == 0);
    CHECK(r64.truncated());
    CHECK_FALSE(r64.u8(u8));  // sticky, though a byte may be there
    ByteReader r32(data.view());
    CHECK(r32.u32(u32) == (size >= 4));
    ByteReader r16(data.view());
    CHECK(r16.u16(u16) == (size >= 2));
    ByteReader r8(data.view());
    CHECK(r8.u8(u8) == (size >= 1));
  }
}

TEST_CASE("counted runs: any 64-bit count is checked, not wrapped") {
  Exact data("abcd"s);
  ByteReader r(data.view());
  std::string_view run;
  CHECK_FALSE(r.bytes(UINT64_MAX, run));
  CHECK(r.truncated());
  CHECK(r.rest().empty());

  ByteReader s(data.view());
  CHECK(s.skip(1));
  CHECK(s.bytes(2, run));
  CHECK(run == "bc");
  CHECK_FALSE(s.skip(2));
  CHECK(s.remaining() == 1);

  ByteReader t(data.view());
  CHECK(t.skip(1));
  CHECK(t.rest() == "bcd");
  CHECK(t.at_end());
}

}  // namespace
}  // namespace sw::wire
