// Malformed protocol input: an ErrorResponse 08P01 and a close, nothing forwarded, and every other
// client carries on (a bystander inside an open transaction checks after each case).
#include "it_test.h"

using namespace it;

namespace {

struct Fixture {
  std::unique_ptr<Target> target;
  PgConn bystander;
  std::string table = unique_name("bystander");

  Fixture() {
    target = std::make_unique<Target>(shared_cluster());
    PgConn admin = shared_cluster().admin("app");
    REQUIRE_OK(admin.exec("CREATE TABLE " + table + " (id int)"));
    bystander = target->connect_or_throw();
    REQUIRE_OK(bystander.exec("BEGIN"));
    REQUIRE_OK(bystander.exec("INSERT INTO " + table + " VALUES (1)"));
  }

  // The bystander's transaction and new clients still work.
  void others_carry_on() {
    INFO("proxy log:\n" << target->log_tail());
    CHECK(bystander.value("SELECT count(*) FROM " + table) == "1");
    ConnectResult fresh = target->connect();
    REQUIRE_MESSAGE(fresh.ok, fresh.error);
    CHECK(fresh.conn.value("SELECT 'fresh-client'") == "fresh-client");
  }

  ~Fixture() {
    bystander.exec("ROLLBACK");
    shared_cluster().admin("app").exec("DROP TABLE IF EXISTS " + table);
  }

  // A logged-in libpq connection whose socket the test then writes raw bytes to.
  PgConn logged_in() {
    PgConn c = target->connect_or_throw();
    REQUIRE(c.value("SELECT 1") == "1");
    return c;
  }

  bool strict() const { return !target->direct(); }
};

}  // namespace

TEST_SUITE("malformed") {
  TEST_CASE_FIXTURE(Fixture, "startup packet with an absurd length") {
    RawSocket s(target->port());
    REQUIRE(s.send_all(wire::be32(0x7fffffff) + wire::be32(196608)));
    expect_error_and_close(s, "length 0x7fffffff", strict());
    RawSocket neg(target->port());
    REQUIRE(neg.send_all(wire::be32(0xfffffff0u) + wire::be32(196608)));
    expect_error_and_close(neg, "length 0xfffffff0", strict());
    RawSocket tiny(target->port());
    REQUIRE(tiny.send_all(wire::be32(2) + wire::be32(196608)));
    expect_error_and_close(tiny, "length 2", strict());
    others_carry_on();
  }

  TEST_CASE_FIXTURE(Fixture, "oversized startup packet (> 10000 bytes)") {
    RawSocket s(target->port());
    std::string packet = wire::startup_message(
        {{"user", "app"}, {"database", "app"}, {"application_name", std::string(20000, 'a')}});
    REQUIRE(packet.size() > 20000);
    REQUIRE(s.send_all(packet));
    expect_error_and_close(s, "20 kB startup packet", strict());
    others_carry_on();
  }

  TEST_CASE_FIXTURE(Fixture, "an HTTP request instead of a startup packet") {
    RawSocket s(target->port());
    REQUIRE(s.send_all("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"));
    expect_error_and_close(s, "HTTP request", strict());
    others_carry_on();
  }

  TEST_CASE_FIXTURE(Fixture, "bytes sent right after an SSLRequest, in the same packet") {
    RawSocket s(target->port());
    REQUIRE(s.send_all(wire::ssl_request() + wire::startup_message({{"user", "app"}, {"database", "app"}})));
    expect_error_and_close(s, "SSLRequest + StartupMessage in one packet", true, "08P01",
                           /*allow_ssl_answer=*/true);
    others_carry_on();
  }

  TEST_CASE_FIXTURE(Fixture, "unsupported protocol version") {
    RawSocket s(target->port());
    REQUIRE(s.send_all(wire::startup_message({{"user", "app"}, {"database", "app"}}, 0x00020000)));
    std::string bytes = s.read_until_closed(10s);
    INFO("received " << wire::printable(bytes));
    CHECK(s.closed());
    // PostgreSQL answers a 2.0 client with a protocol-2 error ('E' + text); a v3 ErrorResponse is fine too.
    REQUIRE_FALSE(bytes.empty());
    CHECK(bytes[0] == 'E');
    if (auto err = wire::find_error(bytes); err && !err->sqlstate().empty())
      CHECK((err->sqlstate() == "0A000" || err->sqlstate() == "08P01"));
    else
      CHECK(contains(bytes, "unsupported"));
    others_carry_on();
  }

  TEST_CASE_FIXTURE(Fixture, "a second StartupMessage after login") {
    PgConn c = logged_in();
    RawSocket s = RawSocket::borrow(PQsocket(c.get()));
    REQUIRE(s.send_all(wire::startup_message({{"user", "app"}, {"database", "app"}})));
    expect_error_and_close(s, "second StartupMessage", true);
    others_carry_on();
  }

  TEST_CASE_FIXTURE(Fixture, "a StartupMessage in the middle of the SCRAM exchange") {
    PROXY_ONLY();
    RawSocket s(target->port());
    REQUIRE(s.send_all(wire::startup_message({{"user", "app"}, {"database", "app"}})));
    std::string got = s.read_some(5s);
    REQUIRE_MESSAGE(!got.empty(), "no authentication request");
    REQUIRE(got[0] == 'R');
    REQUIRE(s.send_all(wire::startup_message({{"user", "app"}, {"database", "app"}})));
    expect_error_and_close(s, "StartupMessage instead of SASLInitialResponse", true);
    others_carry_on();
  }

  TEST_CASE_FIXTURE(Fixture, "a Query message with an absurd length after login") {
    PgConn c = logged_in();
    RawSocket s = RawSocket::borrow(PQsocket(c.get()));
    REQUIRE(s.send_all(std::string(1, 'Q') + wire::be32(0x7ffffff0) + "SELECT 1"));
    expect_error_and_close(s, "Q with length 0x7ffffff0", strict());
    others_carry_on();
  }

  TEST_CASE_FIXTURE(Fixture, "a Sync message longer than the small-message limit") {
    PgConn c = logged_in();
    RawSocket s = RawSocket::borrow(PQsocket(c.get()));
    REQUIRE(s.send_all(std::string(1, 'S') + wire::be32(100000)));
    expect_error_and_close(s, "Sync with length 100000", strict());
    others_carry_on();
  }

  TEST_CASE_FIXTURE(Fixture, "a message length below 4") {
    PgConn c = logged_in();
    RawSocket s = RawSocket::borrow(PQsocket(c.get()));
    REQUIRE(s.send_all(std::string(1, 'Q') + wire::be32(2)));
    expect_error_and_close(s, "Q with length 2", strict());
    others_carry_on();
  }

  TEST_CASE_FIXTURE(Fixture, "an unknown message type after login") {
    PgConn c = logged_in();
    RawSocket s = RawSocket::borrow(PQsocket(c.get()));
    REQUIRE(s.send_all(wire::message('z', "junk")));
    expect_error_and_close(s, "message type 'z'", true);
    others_carry_on();
  }

  TEST_CASE_FIXTURE(Fixture, "GSSENCRequest is answered N and the login continues") {
    RawSocket s(target->port());
    REQUIRE(s.send_all(wire::gssenc_request()));
    std::string answer = s.read_exact(1, 5s);
    if (target->direct() && answer == "G") return;  // PostgreSQL built with GSSAPI offers it
    CHECK(answer == "N");
    REQUIRE(s.send_all(wire::startup_message({{"user", "app"}, {"database", "app"}})));
    std::string got = s.read_some(5s);
    REQUIRE_MESSAGE(!got.empty(), "no reply after GSSENCRequest + StartupMessage");
    CHECK(got[0] == 'R');
    others_carry_on();
  }

  TEST_CASE_FIXTURE(Fixture, "100 truncated and garbage connections at once") {
    std::vector<std::unique_ptr<RawSocket>> socks;
    for (int i = 0; i < 100; ++i) {
      auto s = std::make_unique<RawSocket>(target->port());
      std::string packet = wire::startup_message({{"user", "app"}, {"database", "app"}});
      switch (i % 4) {
        case 0: s->send_all(packet.substr(0, packet.size() / 2)); break;  // truncated, then closed
        case 1: s->send_all(wire::be32(0x7fffffff)); break;
        case 2: s->send_all(std::string(64, '\xff')); break;
        case 3: break;  // connect and close
      }
      socks.push_back(std::move(s));
    }
    for (size_t i = 0; i < socks.size(); i += 2) socks[i]->close_now();
    for (int i = 0; i < 20; ++i) CHECK(bystander.value("SELECT " + std::to_string(i)) == std::to_string(i));
    socks.clear();
    others_carry_on();
  }

}  // TEST_SUITE
