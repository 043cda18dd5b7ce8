// Protocol version negotiation: a StartupMessage asking for protocol 3.x (x > 0) or carrying
// "_pq_." options gets the same NegotiateProtocolVersion from shardwire as from PostgreSQL 15,
// byte for byte, and the login then goes on.
#include "it_test.h"

using namespace it;

namespace {

// Backend messages read until one of type `last` or an ErrorResponse arrives (or 10 s pass).
std::vector<wire::Message> read_until(RawSocket& sock, char last) {
  std::vector<wire::Message> got;
  std::string pending;
  const auto start = std::chrono::steady_clock::now();
  while (ms_since(start) < 10000) {
    pending += sock.read_some(std::chrono::milliseconds(500));
    for (wire::Message& m : wire::parse_messages(pending, &pending)) got.push_back(std::move(m));
    if (!got.empty() && (got.back().type == last || got.back().type == 'E')) break;
    if (sock.closed()) break;
  }
  return got;
}

struct Case {
  const char* what;
  uint32_t version;
  std::vector<std::pair<std::string, std::string>> extra;
};

const std::vector<Case> kCases = {
    {"protocol 3.1, no options", 0x00030001u, {}},
    {"protocol 3.0 with two _pq_ options", 0x00030000u, {{"_pq_.compression", "on"}, {"_pq_.b", ""}}},
    {"protocol 3.7 with one _pq_ option", 0x00030007u, {{"_pq_.x", "1"}}},
};

std::string startup_for(const Case& c) {
  std::vector<std::pair<std::string, std::string>> params = {{"user", "app"}, {"database", "app"}};
  params.insert(params.begin() + 1, c.extra.begin(), c.extra.end());
  return wire::startup_message(params, c.version);
}

}  // namespace

TEST_SUITE("startup_negotiation") {
  TEST_CASE("NegotiateProtocolVersion as PostgreSQL 15 sends it, then the login goes on") {
    PROXY_ONLY();
    ProxyOptions options;
    options.auth_method = "trust";  // the raw socket then sees the whole login without SCRAM
    ProxyProcess proxy(shared_cluster(), options);
    for (const Case& c : kCases) {
      const std::string what = c.what;
      CAPTURE(what);
      RawSocket direct(shared_cluster().port());
      REQUIRE(direct.send_all(startup_for(c)));
      std::vector<wire::Message> from_pg = read_until(direct, 'R');
      REQUIRE(from_pg.size() >= 2);
      REQUIRE(from_pg[0].type == 'v');
      CHECK(from_pg[1].type == 'R');  // PostgreSQL goes on to authentication

      RawSocket sock(proxy.port());
      REQUIRE(sock.send_all(startup_for(c)));
      std::vector<wire::Message> from_proxy = read_until(sock, 'Z');
      INFO("proxy log:\n" << proxy.log_tail());
      REQUIRE(from_proxy.size() >= 2);
      CHECK(from_proxy[0].type == 'v');
      CHECK(wire::printable(from_proxy[0].body) == wire::printable(from_pg[0].body));
      CHECK(from_proxy[0].body == from_pg[0].body);
      CHECK(from_proxy[1].type == 'R');
      REQUIRE(from_proxy.back().type == 'Z');

      REQUIRE(sock.send_all(wire::query("SELECT 40 + 2")));
      std::vector<wire::Message> answer = read_until(sock, 'Z');
      REQUIRE_FALSE(answer.empty());
      CHECK(answer.back().type == 'Z');
      bool saw_row = false;
      for (const wire::Message& m : answer) {
        if (m.type == 'D') saw_row = contains(m.body, "42");
      }
      CHECK(saw_row);
    }
  }

  TEST_CASE("a plain 3.0 StartupMessage gets no NegotiateProtocolVersion") {
    PROXY_ONLY();
    ProxyOptions options;
    options.auth_method = "trust";
    ProxyProcess proxy(shared_cluster(), options);
    RawSocket sock(proxy.port());
    REQUIRE(sock.send_all(wire::startup_message({{"user", "app"}, {"database", "app"}})));
    std::vector<wire::Message> got = read_until(sock, 'Z');
    REQUIRE_FALSE(got.empty());
    CHECK(got.front().type == 'R');
    CHECK(got.back().type == 'Z');
  }
}
