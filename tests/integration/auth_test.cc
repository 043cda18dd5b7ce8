// Client authentication by shardwire: trust, md5, scram-sha-256 (also with a stored SCRAM
// verifier); wrong password and unknown user refused with the same 28P01 message, an unknown
// database with PostgreSQL's 3D000 once authenticated; the login timeout.
#include <regex>

#include "it_test.h"

using namespace it;

namespace {

// "password authentication failed for user "app"" out of libpq's verbose connection error.
std::string fatal_message(const std::string& error) {
  std::smatch m;
  if (std::regex_search(error, m, std::regex(R"(FATAL:  (?:[0-9A-Z]{5}: )?([^\n]*))"))) return m[1];
  return error;
}

// The first backend message after a StartupMessage (user app, database `db`).
wire::Message first_reply(int port, const std::string& user, const std::string& db) {
  RawSocket s(port);
  REQUIRE(s.send_all(wire::startup_message({{"user", user}, {"database", db}})));
  std::string bytes, rest;
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline && !s.closed()) {
    bytes += s.read_some(500ms);
    auto msgs = wire::parse_messages(bytes, &rest);
    if (!msgs.empty()) return msgs.front();
  }
  FAIL("no reply to StartupMessage, got " << wire::printable(bytes));
  return {};
}

uint32_t auth_code(const wire::Message& m) { return m.body.size() >= 4 ? wire::get_be32(m.body, 0) : 999; }

}  // namespace

TEST_SUITE("auth") {
  TEST_CASE("wrong password and unknown user: same 28P01 message; an unknown database 3D000 after it") {
    ProxyOptions o;
    o.users = {{"app", "secret"}, {"other", "otherpw"}};
    Target t(shared_cluster(), o);
    INFO("proxy log:\n" << t.log_tail());
    ConnectResult good = t.connect();
    REQUIRE_MESSAGE(good.ok, good.error);
    if (!t.direct()) {
      ConnectResult other = connect(t.conninfo("other", "otherpw"));
      CHECK_MESSAGE(other.ok, other.error);  // backend login uses the shard DSN's credentials
    }

    ConnectResult wrong = connect(t.conninfo("app", "not-the-password"));
    ConnectResult unknown_user = connect(t.conninfo("nobody", "secret"));
    INFO("wrong password: " << wrong.error);
    INFO("unknown user: " << unknown_user.error);
    CHECK_FALSE(wrong.ok);
    CHECK_FALSE(unknown_user.ok);
    CHECK(wrong.sqlstate == "28P01");
    CHECK(unknown_user.sqlstate == "28P01");
    CHECK(fatal_message(wrong.error) == "password authentication failed for user \"app\"");
    CHECK(fatal_message(unknown_user.error) == "password authentication failed for user \"nobody\"");

    // As PostgreSQL: the database is checked once the client has authenticated.
    ConnectResult unknown_db = connect("host=127.0.0.1 port=" + std::to_string(t.port()) +
                                       " dbname=no_such_db user=app password=secret sslmode=disable");
    INFO("unknown database: " << unknown_db.error);
    CHECK_FALSE(unknown_db.ok);
    CHECK(unknown_db.sqlstate == "3D000");
    CHECK(fatal_message(unknown_db.error) == "database \"no_such_db\" does not exist");
    // An unknown database with a wrong password: the password fails first.
    ConnectResult both = connect("host=127.0.0.1 port=" + std::to_string(t.port()) +
                                 " dbname=no_such_db user=app password=nope sslmode=disable");
    CHECK(fatal_message(both.error) == fatal_message(wrong.error));
    // Still serving.
    ConnectResult again = t.connect();
    CHECK_MESSAGE(again.ok, again.error);
  }

  TEST_CASE("auth methods: trust, md5, scram-sha-256") {
    PROXY_ONLY();
    struct Case {
      std::string method;
      uint32_t code;  // AuthenticationRequest code the proxy must send first
    };
    for (const Case& c : {Case{"trust", 0}, Case{"md5", 5}, Case{"scram-sha-256", 10}}) {
      CAPTURE(c.method);
      ProxyOptions o;
      o.auth_method = c.method;
      ProxyProcess p(shared_cluster(), o);
      INFO("proxy log:\n" << p.log_tail());
      wire::Message m = first_reply(p.port(), "app", "app");
      CHECK(m.type == 'R');
      CHECK(auth_code(m) == c.code);
      if (c.code == 10) CHECK(contains(m.body, "SCRAM-SHA-256"));
      if (c.code == 5) CHECK(m.body.size() == 8);  // code + 4-byte salt

      ConnectResult good = connect(p.conninfo("app", "secret"));
      CHECK_MESSAGE(good.ok, good.error);
      if (good.ok) CHECK(good.conn.value("SELECT 'logged-in'") == "logged-in");
      ConnectResult bad = connect(p.conninfo("app", "wrong"));
      if (c.method == "trust") {
        CHECK_MESSAGE(bad.ok, bad.error);  // trust never asks for the password
      } else {
        CHECK_FALSE(bad.ok);
        CHECK(bad.sqlstate == "28P01");
      }
      ConnectResult unknown = connect(p.conninfo("nobody", "secret"));
      CHECK_FALSE(unknown.ok);
      CHECK(unknown.sqlstate == "28P01");
    }
  }

  TEST_CASE("scram-sha-256 against a stored SCRAM verifier") {
    PROXY_ONLY();
    // PostgreSQL's own verifier for app/secret.
    std::string verifier =
        shared_cluster().admin("postgres").value("SELECT rolpassword FROM pg_authid WHERE rolname = 'app'");
    REQUIRE(verifier.rfind("SCRAM-SHA-256$", 0) == 0);
    ProxyOptions o;
    o.users = {{"app", verifier}};
    ProxyProcess p(shared_cluster(), o);
    INFO("proxy log:\n" << p.log_tail());
    ConnectResult good = connect(p.conninfo("app", "secret"));
    CHECK_MESSAGE(good.ok, good.error);
    ConnectResult bad = connect(p.conninfo("app", verifier));  // the verifier is not the password
    CHECK_FALSE(bad.ok);
    CHECK(bad.sqlstate == "28P01");
  }

  TEST_CASE("login_timeout closes clients that do not finish logging in") {
    PROXY_ONLY();
    ProxyOptions o;
    o.login_timeout = "1s";
    ProxyProcess p(shared_cluster(), o);
    INFO("proxy log:\n" << p.log_tail());
    auto start = std::chrono::steady_clock::now();
    RawSocket silent(p.port());   // says nothing
    RawSocket stalled(p.port());  // starts SCRAM, never answers the challenge
    REQUIRE(stalled.send_all(wire::startup_message({{"user", "app"}, {"database", "app"}})));
    silent.read_until_closed(8s);
    CHECK(silent.closed());
    stalled.read_until_closed(8s);
    CHECK(stalled.closed());
    long long took = ms_since(start);
    MESSAGE("both closed after " << took << " ms (login_timeout 1 s)");
    CHECK(took >= 800);  // not before login_timeout
    ConnectResult good = connect(p.conninfo());
    CHECK_MESSAGE(good.ok, good.error);
  }

}  // TEST_SUITE
