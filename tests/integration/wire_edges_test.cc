// Protocol edges where shardwire must answer exactly as PostgreSQL does (each case also passes
// straight against PostgreSQL, SHARDWIRE_IT_DIRECT=1): Bind parameter counts past 32,767, a
// server's FATAL relayed once, a Terminate before the startup packet, SASLprep's NFKC in a SCRAM
// login, the default application_name.
#include <cstdio>

#include "it_test.h"

using namespace it;

namespace {

// Every ErrorResponse line of a PQtrace log (from the server: "B").
int errors_received(FILE* trace, std::string* seen) {
  std::fflush(trace);
  std::rewind(trace);
  int count = 0;
  char line[4096];
  while (std::fgets(line, sizeof line, trace) != nullptr) {
    std::string text(line);
    if (text.rfind("B\t", 0) == 0 && contains(text, "\tErrorResponse\t")) {
      count += 1;
      *seen += text;
    }
  }
  return count;
}

// The statement text and parameters of SELECT $1::int + $N::int with N int4 parameters "1".."N".
struct ManyParams {
  std::string sql;
  std::vector<Oid> types;
  std::vector<std::string> values;
  std::vector<const char*> pointers;
  explicit ManyParams(int n) : sql("SELECT $1::int + $" + std::to_string(n) + "::int"), types(n, 23) {
    for (int i = 1; i <= n; ++i) values.push_back(std::to_string(i));
    for (const std::string& v : values) pointers.push_back(v.c_str());
  }
};

}  // namespace

TEST_SUITE("wire_edges") {
  TEST_CASE("a Bind with up to 65,535 parameters runs, as on PostgreSQL") {
    for (const std::string mode : {"transaction", "session"}) {
      ProxyOptions o;
      o.pool_mode = mode;
      Target t(shared_cluster(), o);
      INFO("pool mode " << mode << "; proxy log:\n" << t.log_tail());
      PgConn c = t.connect_or_throw();
      for (int n : {40000, 65535}) {
        CAPTURE(n);
        ManyParams p(n);
        REQUIRE(PQsendQueryParams(c.get(), p.sql.c_str(), n, p.types.data(), p.pointers.data(), nullptr,
                                  nullptr, 0) == 1);
        PgResult r = c.wait_result(30s);
        REQUIRE_MESSAGE(r.ok(), r.describe());
        CHECK(r.value() == std::to_string(1 + n));
      }
      CHECK(c.value("SELECT 'still-usable'") == "still-usable");
    }
  }

  TEST_CASE("a server's FATAL reaches the client once, as PostgreSQL sends it") {
    for (const std::string mode : {"transaction", "session"}) {
      for (bool running : {false, true}) {
        ProxyOptions o;
        o.pool_mode = mode;
        Target t(shared_cluster(), o);
        INFO("pool mode " << mode << (running ? ", a query running" : ", idle in a transaction")
                          << "; proxy log:\n"
                          << t.log_tail());
        PgConn c = t.connect_or_throw();
        FILE* trace = std::tmpfile();
        REQUIRE(trace != nullptr);
        PQtrace(c.get(), trace);
        PQsetTraceFlags(c.get(), PQTRACE_SUPPRESS_TIMESTAMPS);
        REQUIRE_OK(c.exec("BEGIN"));
        const std::string pid = c.value("SELECT pg_backend_pid()");
        PgConn admin = shared_cluster().admin("postgres");
        PgResult failed;
        if (running) {
          REQUIRE(c.send("SELECT pg_sleep(30)"));
          REQUIRE(wait_until(
              [&] {
                return admin.value("SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND pid = " +
                                   pid) == "1";
              },
              10s));
          REQUIRE(admin.value("SELECT pg_terminate_backend(" + pid + ")") == "t");
          failed = c.wait_result(15s);
        } else {
          REQUIRE(admin.value("SELECT pg_terminate_backend(" + pid + ")") == "t");
          REQUIRE(wait_until(
              [&] { return admin.value("SELECT count(*) FROM pg_stat_activity WHERE pid = " + pid) == "0"; },
              10s));
          failed = c.exec("SELECT 'after terminate'", 15s);
        }
        CHECK_FALSE(failed.timed_out());
        CHECK(failed.sqlstate() == "57P01");
        CHECK(PQstatus(c.get()) == CONNECTION_BAD);
        PQuntrace(c.get());
        std::string seen;
        CHECK_MESSAGE(errors_received(trace, &seen) == 1, "ErrorResponses received:\n" << seen);
        CHECK(contains(seen, "\"FATAL\""));
        std::fclose(trace);
      }
    }
  }

  TEST_CASE("a Terminate before the startup packet is a quiet close") {
    Target t(shared_cluster());
    INFO("proxy log:\n" << t.log_tail());
    for (bool split : {false, true}) {
      CAPTURE(split);
      RawSocket s(t.port());
      const std::string terminate("X\0\0\0\4", 5);
      if (split) {
        REQUIRE(s.send_all(terminate.substr(0, 2)));
        sleep_ms(100);
        REQUIRE(s.send_all(terminate.substr(2)));
      } else {
        REQUIRE(s.send_all(terminate));
      }
      std::string bytes = s.read_until_closed(10s);
      CHECK(s.closed());
      CHECK_MESSAGE(bytes.empty(), "received " << wire::printable(bytes));
    }
    // A connection after it works.
    PgConn c = t.connect_or_throw();
    CHECK(c.value("SELECT 1") == "1");
  }

  TEST_CASE("SCRAM login with a password that SASLprep normalizes (NFKC)") {
    // U+2168 ROMAN NUMERAL NINE: NFKC makes "IX-IX". libpq normalizes the password it is given,
    // the server side must too (PostgreSQL stores the normalized password's secret).
    const std::string raw = "IX-\xE2\x85\xA8";
    const std::string role = unique_name("nfkc");
    PgConn admin = shared_cluster().admin("postgres");
    REQUIRE_OK(admin.exec("CREATE ROLE " + role + " LOGIN PASSWORD U&'IX-\\2168'"));
    REQUIRE_OK(admin.exec("GRANT ALL ON DATABASE app TO " + role));
    ProxyOptions o;
    o.users.push_back({role, raw});
    Target t(shared_cluster(), o);
    INFO("proxy log:\n" << t.log_tail());
    for (const std::string& password : {raw, std::string("IX-IX")}) {
      CAPTURE(password);
      ConnectResult r = it::connect(t.conninfo(role, "'" + password + "'"));
      REQUIRE_MESSAGE(r.ok, r.error);
      CHECK(r.conn.value("SELECT 'nfkc-ok'") == "nfkc-ok");
    }
    ConnectResult wrong = it::connect(t.conninfo(role, "IX-I"));
    CHECK_FALSE(wrong.ok);
    CHECK(wrong.sqlstate == "28P01");
    admin.exec("DROP ROLE " + role);
  }

  TEST_CASE("the default application_name is PostgreSQL's ''") {
    for (const std::string mode : {"transaction", "session"}) {
      ProxyOptions o;
      o.pool_mode = mode;
      Target t(shared_cluster(), o);
      INFO("pool mode " << mode << "; proxy log:\n" << t.log_tail());
      PgConn c = t.connect_or_throw();
      CHECK(c.parameter("application_name").empty());
      CHECK(c.value("SHOW application_name").empty());
      REQUIRE_OK(c.exec("SET application_name = 'named'"));
      CHECK(c.parameter("application_name") == "named");
      REQUIRE_OK(c.exec("RESET application_name"));
      CHECK(c.parameter("application_name").empty());
      CHECK(c.value("SHOW application_name").empty());
      REQUIRE_OK(c.exec("SET application_name = 'again'"));
      REQUIRE_OK(c.exec("RESET ALL"));
      CHECK(c.value("SELECT current_setting('application_name')").empty());
      // A client that names itself keeps its name.
      PgConn named = t.connect_or_throw("sslmode=disable application_name=mine");
      CHECK(named.parameter("application_name") == "mine");
      CHECK(named.value("SHOW application_name") == "mine");
    }
  }
}
