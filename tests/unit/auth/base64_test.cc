#include "auth/base64.h"

#include <doctest/doctest.h>

#include <random>

using sw::auth::base64_decode;
using sw::auth::base64_encode;

TEST_CASE("base64: RFC 4648 test vectors") {
  const std::pair<const char*, const char*> vectors[] = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
  };
  for (auto [plain, encoded] : vectors) {
    CHECK(base64_encode(plain) == encoded);
    auto decoded = base64_decode(encoded);
    REQUIRE(decoded.has_value());
    CHECK(*decoded == plain);
  }
}

TEST_CASE("base64: round trip of every byte value and many lengths") {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  CHECK(*base64_decode(base64_encode(all)) == all);

  std::mt19937 rng(7);
  for (size_t length = 0; length < 100; ++length) {
    std::string data;
    for (size_t i = 0; i < length; ++i) data.push_back(static_cast<char>(rng()));
    std::string encoded = base64_encode(data);
    CHECK(encoded.size() == (length + 2) / 3 * 4);
    auto decoded = base64_decode(encoded);
    REQUIRE(decoded.has_value());
    CHECK(*decoded == data);
  }
}

TEST_CASE("base64: only canonical encodings decode") {
  const char* invalid[] = {
      "Zg",     "Zg=",   "Zm9vY", "=Zm9", "Z===", "====", "Zg==Zm9v", "Zm9v====", "Zh==",  "Zm9=",
      "Zm9v\n", " Zm9v", "Zm 9v", "Zm9-", "Zm9_", "Zm=v", "Zg=a",     "\x80Zm9",  "Zm9\0",
  };
  for (const char* text : invalid) {
    CAPTURE(text);
    CHECK_FALSE(base64_decode(text).has_value());
  }
  CHECK_FALSE(base64_decode(std::string_view("Zm9\0", 4)).has_value());
}
