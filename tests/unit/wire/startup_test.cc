// Startup-phase packets: round trips through encoder, read_startup_packet and parser, and every
// malformed layout.
#include "wire/startup.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "wire/frame_reader.h"

namespace sw::wire {
namespace {
using namespace std::string_literals;

// Body of a whole packet (after the length word), checked by read_startup_packet first.
std::string body_of(const std::string& packet) {
  const FrameResult r = read_startup_packet(packet);
  REQUIRE(r.status == FrameStatus::Complete);
  REQUIRE(r.frame.size == packet.size());
  return std::string(r.frame.body);
}

// StartupMessage 3.0 body with the given parameter bytes after the version.
std::string v3_body(const std::string& params) { return "\0\3\0\0"s + params; }

// Parses from an exact-size heap copy so ASan catches a read past the body.
Result<StartupPacket> parse_exact(const std::string& body) {
  std::unique_ptr<char[]> copy(new char[body.size()]);
  if (!body.empty()) body.copy(copy.get(), body.size());
  return parse_startup_packet(std::string_view(copy.get(), body.size()));
}

void check_protocol_error(const std::string& body, const std::string& message_part = "") {
  const Result<StartupPacket> r = parse_exact(body);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().fault == Fault::Client);
  CHECK(r.status().sqlstate == "08P01");
  if (!message_part.empty()) {
    CHECK_MESSAGE(r.status().message.find(message_part) != std::string::npos, r.status().message);
  }
}

}  // namespace

TEST_CASE("startup: StartupMessage round trip keeps parameters in order") {
  const std::vector<std::pair<std::string, std::string>> params = {
      {"user", "app"}, {"database", "orders"}, {"application_name", "psql"}, {"options", ""}};
  const std::string packet = encode_startup_message(params);
  const Result<StartupPacket> r = parse_startup_packet(body_of(packet));
  REQUIRE(r.is_ok());
  CHECK(r.value().kind == StartupKind::Startup);
  CHECK(r.value().protocol == kProtocolVersion3);
  CHECK(r.value().params == params);
  CHECK(r.value().param("user") == "app");
  CHECK(r.value().param("database") == "orders");
  CHECK(r.value().param("options").empty());
  CHECK(r.value().param("missing").empty());
}

TEST_CASE("startup: a repeated parameter, the last one wins") {
  const Result<StartupPacket> r = parse_exact(v3_body("user\0a\0user\0b\0\0"s));
  REQUIRE(r.is_ok());
  CHECK(r.value().params.size() == 2);
  CHECK(r.value().param("user") == "b");
}

TEST_CASE("startup: SSLRequest, GSSENCRequest and CancelRequest") {
  const std::string ssl = encode_ssl_request();
  CHECK(ssl.size() == 8);
  const Result<StartupPacket> s = parse_startup_packet(body_of(ssl));
  REQUIRE(s.is_ok());
  CHECK(s.value().kind == StartupKind::SslRequest);

  std::string gss;
  append_be32(gss, kGssEncRequestCode);
  const Result<StartupPacket> g = parse_exact(gss);
  REQUIRE(g.is_ok());
  CHECK(g.value().kind == StartupKind::GssEncRequest);

  const CancelKey key{12345, 0xdeadbeef};
  const std::string cancel = encode_cancel_request(key);
  CHECK(cancel.size() == 16);
  const Result<StartupPacket> c = parse_startup_packet(body_of(cancel));
  REQUIRE(c.is_ok());
  CHECK(c.value().kind == StartupKind::CancelRequest);
  CHECK(c.value().cancel == key);
}

TEST_CASE("startup: fixed-size requests with the wrong length") {
  std::string ssl;
  append_be32(ssl, kSslRequestCode);
  check_protocol_error(ssl + "x", "SSLRequest");
  std::string gss;
  append_be32(gss, kGssEncRequestCode);
  check_protocol_error(gss + "\0\0\0\0"s, "GSSENCRequest");
  std::string cancel;
  append_be32(cancel, kCancelRequestCode);
  check_protocol_error(cancel + "\0\0\0\1"s, "CancelRequest");            // 12 bytes, not 16
  check_protocol_error(cancel + "\0\0\0\1\0\0\0\2\0"s, "CancelRequest");  // 17 bytes
  const std::string cancel_body = encode_cancel_request({1, 2}).substr(4);
  for (size_t k = 0; k < cancel_body.size(); ++k) check_protocol_error(cancel_body.substr(0, k));
}

TEST_CASE("startup: only protocol major version 3") {
  const Result<StartupPacket> v2 = parse_exact("\0\2\0\0user\0app\0\0"s);
  REQUIRE_FALSE(v2.is_ok());
  CHECK(v2.status().sqlstate == "08P01");
  CHECK(v2.status().message == "unsupported frontend protocol 2.0: server supports 3.0");
  check_protocol_error("\0\4\0\0user\0app\0\0"s, "unsupported frontend protocol 4.0");
  check_protocol_error("\x04\xd2\x16\x31"s, "unsupported frontend protocol 1234.5681");
}

TEST_CASE("startup: a newer 3.x minor version or _pq_ options ask for negotiation") {
  const Result<StartupPacket> plain = parse_exact(v3_body("user\0app\0\0"s));
  REQUIRE(plain.is_ok());
  CHECK_FALSE(plain.value().needs_protocol_negotiation());

  const Result<StartupPacket> minor = parse_exact("\0\3\0\2user\0app\0\0"s);
  REQUIRE(minor.is_ok());
  CHECK(minor.value().kind == StartupKind::Startup);
  CHECK(minor.value().protocol == 0x00030002u);
  CHECK(minor.value().protocol_options.empty());
  CHECK(minor.value().needs_protocol_negotiation());

  // Protocol options are not parameters (PostgreSQL never applies them as settings).
  const Result<StartupPacket> options =
      parse_exact(v3_body("user\0app\0_pq_.b\0x\0database\0db\0_pq_.a\0\0\0"s));
  REQUIRE(options.is_ok());
  CHECK(options.value().needs_protocol_negotiation());
  CHECK(options.value().protocol_options == std::vector<std::string>{"_pq_.b", "_pq_.a"});
  const std::vector<std::pair<std::string, std::string>> params = {{"user", "app"}, {"database", "db"}};
  CHECK(options.value().params == params);
  CHECK(options.value().param("_pq_.b").empty());
}

TEST_CASE("startup: NegotiateProtocolVersion bytes as PostgreSQL 15 sends them") {
  CHECK(encode_negotiate_protocol_version({}) == "v\0\0\0\x0c\0\3\0\0\0\0\0\0"s);
  CHECK(encode_negotiate_protocol_version({"_pq_.b", "_pq_.a"}) ==
        "v\0\0\0\x1a\0\3\0\0\0\0\0\2_pq_.b\0_pq_.a\0"s);
}

TEST_CASE("startup: missing user is 28000") {
  for (const std::string& params :
       {"\0"s, "database\0orders\0\0"s, "user\0\0\0"s, "user\0\0database\0x\0\0"s}) {
    const Result<StartupPacket> r = parse_exact(v3_body(params));
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().fault == Fault::Client);
    CHECK(r.status().sqlstate == "28000");
    CHECK(r.status().message == "no PostgreSQL user name specified in startup packet");
  }
}

TEST_CASE("startup: malformed parameter lists") {
  check_protocol_error(v3_body("user\0app\0\0database\0x\0\0"s), "empty parameter name");
  check_protocol_error(v3_body("\0user\0app\0\0"s), "empty parameter name");
  check_protocol_error(v3_body("user\0app\0\0\0"s), "empty parameter name");
  check_protocol_error(v3_body("user\0app\0"s), "terminator");  // no final NUL
  check_protocol_error(v3_body(""), "terminator");              // nothing after version
  check_protocol_error(v3_body("user\0app\0database"s), "parameter name has no terminator");
  check_protocol_error(v3_body("user\0app"s), "has no terminator");  // value unterminated
  check_protocol_error(v3_body("user\0"s), "has no terminator");     // value missing
  check_protocol_error("", "invalid length");
  check_protocol_error("\0\3\0"s, "invalid length");
}

TEST_CASE("startup: every truncation of a valid packet is an error") {
  const std::string body = body_of(encode_startup_message({{"user", "app"}, {"database", "db"}}));
  REQUIRE(parse_exact(body).is_ok());
  for (size_t k = 0; k < body.size(); ++k) {
    CAPTURE(k);
    CHECK_FALSE(parse_exact(body.substr(0, k)).is_ok());
  }
}

TEST_CASE("startup: oversized packets") {
  // 10001 bytes announced: refused from the length word.
  std::string length;
  append_be32(length, Limits::kMaxStartupPacket + 1);
  CHECK(read_startup_packet(length).status == FrameStatus::Error);
  // The encoder refuses to build a packet the server would refuse; at the limit it works.
  // length word, version, "user\0", "app\0", "x\0", the value's NUL, the final NUL
  const size_t fixed = 4 + 4 + 5 + 4 + 2 + 1 + 1;
  const std::string at_limit =
      encode_startup_message({{"user", "app"}, {"x", std::string(10000 - fixed, 'v')}});
  CHECK(at_limit.size() == 10000);
  CHECK(parse_startup_packet(body_of(at_limit)).is_ok());
  CHECK(encode_startup_message({{"user", "app"}, {"x", std::string(10001 - fixed, 'v')}}).empty());
  CHECK(encode_startup_message({{"user", "a\0b"s}}).empty());
}

}  // namespace sw::wire
