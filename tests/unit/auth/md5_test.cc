#include "auth/md5.h"

#include <doctest/doctest.h>

using namespace sw::auth;

TEST_CASE("md5_hex: RFC 1321 vectors") {
  CHECK(md5_hex("") == "d41d8cd98f00b204e9800998ecf8427e");
  CHECK(md5_hex("abc") == "900150983cd24fb0d6963f7d28e17f72");
  CHECK(md5_hex("The quick brown fox jumps over the lazy dog") == "9e107d9d372bb6826bd81d3542a419d6");
}

// PostgreSQL stores "md5" + md5(password || user); for user postgres and password secret that is
// "md553f48b7c4b76a86ce72276c5755f217d" (read back from pg_authid of PostgreSQL 15.20).
TEST_CASE("md5: PostgreSQL stored hash and challenge response") {
  CHECK("md5" + md5_hex("secretpostgres") == "md553f48b7c4b76a86ce72276c5755f217d");

  const char salt1[4] = {0x01, 0x02, 0x03, 0x04};
  CHECK(md5_password_response("postgres", "secret", salt1) == "md5bb41a296aab6baccb36ff243a562abff");
  // Salt bytes are raw (including NUL and high bytes), not a C string.
  const char salt2[4] = {static_cast<char>(0xff), 0x00, static_cast<char>(0x80), 0x7f};
  CHECK(md5_password_response("postgres", "secret", salt2) == "md5af5825a82e8a131090770b6d3ea127f9");
  // The response depends on the user, the password and the salt.
  CHECK(md5_password_response("postgre", "ssecret", salt1) !=
        md5_password_response("postgres", "secret", salt1));
  CHECK(md5_password_response("postgres", "secreT", salt1) !=
        md5_password_response("postgres", "secret", salt1));
  CHECK(md5_password_response("postgres", "secret", salt2) !=
        md5_password_response("postgres", "secret", salt1));
}

TEST_CASE("constant_time_equal") {
  CHECK(constant_time_equal("", ""));
  CHECK(constant_time_equal("abc", "abc"));
  CHECK(constant_time_equal(std::string_view("a\0b", 3), std::string_view("a\0b", 3)));
  CHECK_FALSE(constant_time_equal(std::string_view("a\0b", 3), std::string_view("a\0c", 3)));
  CHECK_FALSE(constant_time_equal("abc", "abd"));
  CHECK_FALSE(constant_time_equal("abc", "ab"));
  CHECK_FALSE(constant_time_equal("ab", "abc"));
  CHECK_FALSE(constant_time_equal("", "a"));
}
