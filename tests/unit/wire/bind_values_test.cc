// decode_bind_values: formats, values and NULLs, every length checked, and PostgreSQL's errors;
// a decode into reused buffers sees nothing of the one before and allocates nothing. The count
// is deterministic: a replaced operator new counts this thread's calls while armed.
#include "wire/bind_values.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "allocation_count.h"

namespace sw::wire {
namespace {

#if SW_COUNTS_ALLOCATIONS
using sw::test::start_counting_allocations;
using sw::test::stop_counting_allocations;
#endif

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

TEST_CASE("decode_bind_values: counts are unsigned 16-bit, up to 65535 as PostgreSQL reads them") {
  // Read as signed, 32768 parameters were a negative count and the Bind "malformed" (08P01).
  for (int count : {32767, 32768, 65535}) {
    CAPTURE(count);
    // One format code per parameter (all binary), value i+1 as text for every parameter but the
    // last, which is NULL.
    std::string rest = be16(count);
    for (int i = 0; i < count; ++i) rest += be16(1);
    rest += be16(count);
    for (int i = 0; i + 1 < count; ++i) rest += be32(1) + std::string(1, static_cast<char>('a' + i % 26));
    rest += be32(-1) + be16(0);
    auto values = decode_bind_values(rest, {});
    REQUIRE(values.is_ok());
    REQUIRE(values->params.size() == static_cast<size_t>(count));
    CHECK(values->params[0].bytes == "a");
    CHECK(values->params[static_cast<size_t>(count) - 2].binary);
    CHECK(values->params.back().null);
    // The same with one format code for all; a count one short of the values is malformed.
    std::string one = be16(1) + be16(0) + be16(count);
    for (int i = 0; i < count; ++i) one += be32(-1);
    REQUIRE(decode_bind_values(one + be16(0), {}).is_ok());
    CHECK(decode_bind_values(one.substr(0, one.size() - 4), {}).status().sqlstate == "08P01");
  }
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

// Three parameters: 42 (text), NULL, x (text); no result formats.
const std::string kThree = be16(1) + be16(0) + be16(3) + be32(2) + "42" + be32(-1) + be32(1) + "x" + be16(0);
const std::vector<uint32_t> kThreeTypes = {20, 25, 25};

void check_three(const BindValues& values) {
  REQUIRE(values.params.size() == 3);
  CHECK(values.types == kThreeTypes);
  CHECK(values.params[0].bytes == "42");
  CHECK_FALSE(values.params[0].null);
  CHECK_FALSE(values.params[0].binary);
  CHECK(values.params[1].null);
  CHECK(values.params[1].bytes.empty());
  CHECK_FALSE(values.params[1].binary);
  CHECK(values.params[2].bytes == "x");
}

TEST_CASE("decode_bind_values into reused buffers: nothing of the previous Bind is left") {
  BindValues values;
  // Before: three binary values and no types, then a failed decode.
  const std::string binary =
      be16(1) + be16(1) + be16(3) + be32(1) + "a" + be32(1) + "b" + be32(1) + "c" + be16(0);
  REQUIRE(decode_bind_values(binary, {}, &values).is_ok());
  REQUIRE(values.params.size() == 3);
  CHECK(values.params[1].binary);
  CHECK(decode_bind_values(be16(0) + be16(1) + be32(5) + "ab", {}, &values).sqlstate == "08P01");
  REQUIRE(decode_bind_values(kThree, kThreeTypes, &values).is_ok());
  check_three(values);
  // Fewer parameters and no types (the values are views into the Bind, which must outlive them).
  const std::string one = be16(0) + be16(1) + be32(1) + "7" + be16(0);
  REQUIRE(decode_bind_values(one, {}, &values).is_ok());
  REQUIRE(values.params.size() == 1);
  CHECK(values.params[0].bytes == "7");
  CHECK(values.types.empty());
}

#if SW_COUNTS_ALLOCATIONS
TEST_CASE("decode_bind_values into buffers that held as many values allocates nothing") {
  BindValues values;
  REQUIRE(decode_bind_values(kThree, kThreeTypes, &values).is_ok());
  REQUIRE(decode_bind_values(be16(0) + be16(0) + be16(0), {}, &values).is_ok());
  start_counting_allocations();
  const Status again = decode_bind_values(kThree, kThreeTypes, &values);
  CHECK(stop_counting_allocations() == 0);
  REQUIRE(again.is_ok());
  check_three(values);

  // The first decode into new buffers allocates them (the count sees allocations).
  BindValues fresh;
  start_counting_allocations();
  REQUIRE(decode_bind_values(kThree, kThreeTypes, &fresh).is_ok());
  CHECK(stop_counting_allocations() == 2);  // the parameters and the types
}
#endif  // SW_COUNTS_ALLOCATIONS

}  // namespace
}  // namespace sw::wire
