// A Bind's fields after the statement name: decode/encode round trips, agreement with
// decode_bind on what is well formed, and malformed bodies (every truncation, trailing bytes, bad
// counts and lengths), decoded from exact-size heap copies so ASan reports any read past them.
#include "wire/bind_rest.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "common/bytes.h"
#include "wire/messages.h"

namespace sw::wire {
namespace {
using namespace std::string_literals;

std::string be32(uint32_t v) {
  std::string out;
  append_be32(out, v);
  return out;
}

std::string be16(uint16_t v) {
  std::string out;
  append_be16(out, v);
  return out;
}

// Heap buffer of exactly the bytes' size.
class Exact {
 public:
  explicit Exact(std::string_view s) : data_(new char[s.size()]), size_(s.size()) {
    if (size_ != 0) s.copy(data_.get(), size_);
  }
  std::string_view view() const { return {data_.get(), size_}; }

 private:
  std::unique_ptr<char[]> data_;
  size_t size_;
};

// formats {1}, values {"42", NULL, ""}, result formats {0, 1}.
const std::string kRest =
    be16(1) + be16(1) + be16(3) + be32(2) + "42" + be32(0xffffffff) + be32(0) + be16(2) + be16(0) + be16(1);

}  // namespace

TEST_CASE("bind_rest: decode takes every field apart") {
  const Exact rest(kRest);
  auto bind = decode_bind_rest(rest.view());
  REQUIRE(bind.is_ok());
  CHECK(bind->param_formats == std::vector<uint16_t>{1});
  REQUIRE(bind->values.size() == 3);
  CHECK(bind->values[0] == std::optional<std::string_view>("42"));
  CHECK_FALSE(bind->values[1].has_value());
  CHECK(bind->values[2] == std::optional<std::string_view>(""));
  CHECK(bind->result_formats == std::vector<uint16_t>{0, 1});
}

TEST_CASE("bind_rest: encode is the inverse of decode") {
  auto bind = decode_bind_rest(kRest);
  REQUIRE(bind.is_ok());
  std::string out = "before";
  encode_bind_rest(out, *bind);
  CHECK(out == "before" + kRest);

  BindRest empty;
  out.clear();
  encode_bind_rest(out, empty);
  CHECK(out == be16(0) + be16(0) + be16(0));

  // A whole Bind from the fields decodes back to them.
  out.clear();
  encode_bind(out, "p", "s", kRest);
  auto whole = decode_bind(std::string_view(out).substr(5));
  REQUIRE(whole.is_ok());
  CHECK(whole->portal == "p");
  CHECK(whole->statement == "s");
  CHECK(whole->rest == kRest);
}

TEST_CASE("bind_rest: more than 65535 values is not encodable and appends nothing") {
  BindRest bind;
  bind.values.assign(0x10000, std::string_view("x"));
  std::string out = "keep";
  encode_bind_rest(out, bind);
  CHECK(out == "keep");
}

TEST_CASE("bind_rest: malformed fields are the client's 08P01, as decode_bind says") {
  auto check_error = [](const std::string& rest) {
    CAPTURE(rest.size());
    const Exact exact(rest);
    auto decoded = decode_bind_rest(exact.view());
    REQUIRE_FALSE(decoded.is_ok());
    CHECK(decoded.status().sqlstate == "08P01");
    CHECK(decoded.status().fault == Fault::Client);
    std::string why;
    CHECK_FALSE(bind_rest_is_well_formed(rest, &why));
    CHECK(decoded.status().message == "invalid Bind message: " + why);
    CHECK_FALSE(decode_bind("\0\0"s + rest).is_ok());
  };
  for (size_t k = 0; k < kRest.size(); ++k) check_error(kRest.substr(0, k));
  check_error(kRest + "\x01");
  // Two format codes for three values; a negative length other than -1; a length past the end.
  check_error(be16(2) + be16(0) + be16(0) + be16(3) + be32(0) + be32(0) + be32(0) + be16(0));
  check_error(be16(0) + be16(1) + be32(0xfffffffe) + be16(0));
  check_error(be16(0) + be16(1) + be32(100) + "ab" + be16(0));
  std::string why;
  CHECK(bind_rest_is_well_formed(kRest, &why));
  CHECK(why.empty());
  CHECK(decode_bind("\0\0"s + kRest).is_ok());
}

}  // namespace sw::wire
