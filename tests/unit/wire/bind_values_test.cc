// decode_bind_values: formats, values and NULLs, every length checked, and PostgreSQL's errors.
#include "wire/bind_values.h"

#include <doctest/doctest.h>

#include <string>

namespace sw::wire {
namespace {

std::string be16(int v) { return {static_cast<char>((v >> 8) & 0xff), static_cast<char>(v & 0xff)}; }
std::string be32(int64_t v) {
  std::string out;
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
  return out;
}

TEST_CASE("decode_bind_values reads formats, values and NULLs, and checks every length") {
  // 2 format codes (text, binary), 3 parameters would mismatch; use 2.
  std::string rest = be16(2) + be16(0) + be16(1) + be16(2) + be32(1) + "7" + be32(8) + std::string(7, '\0') +
                     "\x05" + be16(0);
  auto values = decode_bind_values(rest, {0, 20});
  REQUIRE(values.is_ok());
  REQUIRE(values->params.size() == 2);
  CHECK_FALSE(values->params[0].binary);
  CHECK(values->params[0].bytes == "7");
  CHECK(values->params[1].binary);
  CHECK(values->params[1].bytes.size() == 8);
  CHECK(values->types == std::vector<uint32_t>{0, 20});

  // One format code applies to all; -1 length is NULL.
  auto nulls = decode_bind_values(be16(1) + be16(1) + be16(2) + be32(-1) + be32(0), {});
  REQUIRE(nulls.is_ok());
  CHECK(nulls->params[0].null);
  CHECK((nulls->params[1].binary && !nulls->params[1].null && nulls->params[1].bytes.empty()));

  for (const std::string& bad :
       {std::string(), be16(1), be16(1) + be16(2), be16(0) + be16(1) + be32(5) + "abc",
        be16(0) + be16(1) + be32(-2), be16(2) + be16(0) + be16(0) + be16(1) + be32(0)}) {
    auto result = decode_bind_values(bad, {});
    REQUIRE_FALSE(result.is_ok());
    CHECK(result.status().sqlstate == "08P01");
  }
}

TEST_CASE("decode_bind_values: an unknown format code is PostgreSQL's 22023, only when used") {
  // Found by tests/fuzz/frame_reader_fuzz (corpus/frame_reader/regression_bind_format_code_2):
  // wire::decode_bind accepted the Bind, the router called it malformed (08P01).
  auto used = decode_bind_values(be16(1) + be16(2) + be16(1) + be32(1) + "7" + be16(0), {});
  REQUIRE_FALSE(used.is_ok());
  CHECK(used.status().sqlstate == "22023");
  CHECK(used.status().message == "unsupported format code: 2");
  // With no parameters PostgreSQL never looks at it.
  auto unused = decode_bind_values(be16(1) + be16(-1) + be16(0) + be16(0), {});
  REQUIRE(unused.is_ok());
  CHECK(unused->params.empty());
}

TEST_CASE("decode_bind_values: every truncation of a valid Bind is 08P01") {
  const std::string rest = be16(1) + be16(0) + be16(2) + be32(3) + "abc" + be32(-1) + be16(0);
  REQUIRE(decode_bind_values(rest, {}).is_ok());
  // The result format codes (the last 2 bytes) are not read: cutting into them is fine.
  for (size_t size = 0; size + 2 < rest.size(); ++size) {
    CAPTURE(size);
    auto cut = decode_bind_values(rest.substr(0, size), {});
    REQUIRE_FALSE(cut.is_ok());
    CHECK(cut.status().sqlstate == "08P01");
  }
}

}  // namespace
}  // namespace sw::wire
