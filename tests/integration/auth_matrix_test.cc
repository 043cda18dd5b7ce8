// Auth and admin matrix: client auth method trust / md5 / scram-sha-256 x the
// login cases shardwire's user model has -- right and wrong password, unknown user, unknown
// database, users shardwire accepts but the shard refuses (a NOLOGIN role, an expired password,
// a password that differs on the shard, a role missing on the shard, a user with no password) --
// and the admin console by an admin and by non-admin users. Every cell asserts the exact
// SQLSTATE and message documented in README.md ("Authentication"). The shard DSN names no user,
// so shardwire logs in to the shard as each client's user with its auth.users password: that
// is what makes shard-side refusals reachable.
//
// One user's password is a canary. After the whole matrix, admin SHOW commands and a /metrics
// scrape at log level debug, the canary must not appear in the log, in anything a client or the
// console was told, or in the metrics.
#include <regex>
#include <sstream>

#include "it_test.h"

using namespace it;

namespace {

const std::string kCanary = "canary-7f3a9c-pw";

// The shard's roles for the shard-side cases (the cluster is shared by this process's suites).
void create_roles(const PgCluster& cluster) {
  PgConn admin = cluster.admin("postgres");
  for (const char* role : {"sw_canary", "sw_nologin", "sw_expired", "sw_drift", "sw_nopw"})
    REQUIRE_OK(admin.exec(std::string("DROP ROLE IF EXISTS ") + role));
  REQUIRE_OK(admin.exec("CREATE ROLE sw_canary LOGIN PASSWORD '" + kCanary + "'"));
  REQUIRE_OK(admin.exec("CREATE ROLE sw_nologin NOLOGIN PASSWORD 'nologinpw'"));
  REQUIRE_OK(admin.exec("CREATE ROLE sw_expired LOGIN PASSWORD 'expiredpw' VALID UNTIL '2000-01-01'"));
  REQUIRE_OK(admin.exec("CREATE ROLE sw_drift LOGIN PASSWORD 'shard-side-pw'"));
  REQUIRE_OK(admin.exec("CREATE ROLE sw_nopw LOGIN PASSWORD 'shard-nopw-pw'"));
}

// The message after "FATAL:  <SQLSTATE>: " in libpq's verbose connection error.
std::string fatal_message(const std::string& error) {
  std::smatch m;
  if (std::regex_search(error, m, std::regex(R"(FATAL:  (?:[0-9A-Z]{5}: )?([^\n]*))"))) return m[1];
  return error;
}

std::string refused(const std::string& user) {
  return "password authentication failed for user \"" + user + "\"";
}
std::string shard_refused(const std::string& why) {
  return "could not connect to shard s0: server refused login: " + why;
}

struct Cell {
  std::string user, password, database;
  std::string sqlstate;  // "" = the login succeeds
  std::string message;   // exact FATAL message when it fails
};

// The expected outcome of every cell for one method (README.md, "Authentication").
std::vector<Cell> matrix(const std::string& method) {
  const bool trust = method == "trust";
  // trust never asks for a password: a wrong one changes nothing.
  auto wrong_password = [&](const std::string& user, const std::string& database) {
    return trust ? Cell{user, "wrong-pw", database, "", ""}
                 : Cell{user, "wrong-pw", database, "28P01", refused(user)};
  };
  // The database is checked after authentication, as PostgreSQL does.
  const std::string unknown_database = "database \"no_such_db\" does not exist";
  std::vector<Cell> cells = {
      {"app", "secret", "app", "", ""},
      wrong_password("app", "app"),
      {"nobody", "secret", "app", "28P01", refused("nobody")},
      {"app", "secret", "no_such_db", "3D000", unknown_database},
      {"nobody", "secret", "no_such_db", "28P01", refused("nobody")},
      {"sw_canary", kCanary, "app", "", ""},
      wrong_password("sw_canary", "app"),
      {"sw_canary", kCanary, "no_such_db", "3D000", unknown_database},
      // Accepted by shardwire, refused by the shard: its SQLSTATE and message, after a prefix.
      {"sw_nologin", "nologinpw", "app", "28000",
       shard_refused("role \"sw_nologin\" is not permitted to log in")},
      {"sw_expired", "expiredpw", "app", "28P01", shard_refused(refused("sw_expired"))},
      {"sw_drift", "proxy-side-pw", "app", "28P01", shard_refused(refused("sw_drift"))},
      {"sw_ghost", "ghostpw", "app", "28P01", shard_refused(refused("sw_ghost"))},
      // The admin console.
      {"admin", "adminpw", "shardwire", "", ""},
      wrong_password("admin", "shardwire"),
      {"app", "secret", "shardwire", "28000",
       "user \"app\" may not use the admin console \"shardwire\" (it is not in admin.users)"},
      {"sw_canary", kCanary, "shardwire", "28000",
       "user \"sw_canary\" may not use the admin console \"shardwire\" (it is not in admin.users)"},
      {"nobody", "secret", "shardwire", "28P01", refused("nobody")},
  };
  if (trust) {
    // Only trust allows a user without a password; the shard then gets an empty one.
    cells.push_back(
        {"sw_nopw", "anything", "app", "F0000",
         "could not connect to shard s0: the server asks for a password and user \"sw_nopw\" has none "
         "(auth.users, or a user and password in the shard's dsn)"});
  } else {
    cells.push_back(wrong_password("admin", "app"));  // an admin is an ordinary user outside the console
  }
  return cells;
}

ProxyOptions matrix_options(const std::string& method, int cluster_port, int metrics_port) {
  ProxyOptions o;
  o.auth_method = method;
  o.log_level = "debug";
  o.shard_dsn = "host=127.0.0.1 port=" + std::to_string(cluster_port) + " dbname=app";  // per-user logins
  o.users = {{"app", "secret"},           {"admin", "adminpw"},        {"sw_canary", kCanary},
             {"sw_nologin", "nologinpw"}, {"sw_expired", "expiredpw"}, {"sw_drift", "proxy-side-pw"},
             {"sw_ghost", "ghostpw"}};
  if (method == "trust") o.users.push_back({"sw_nopw", ""});
  o.extra_yaml =
      "admin:\n  database: shardwire\n  users: [admin]\n"
      "metrics:\n  listen: \"127.0.0.1:" +
      std::to_string(metrics_port) + "\"\n";
  return o;
}

// GET /metrics over a plain socket: the whole HTTP response.
std::string scrape_metrics(int port) {
  RawSocket s(port);
  REQUIRE(s.send_all("GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"));
  return s.read_until_closed(10s);
}

std::string render(const PgResult& r) {
  std::ostringstream out;
  for (const auto& n : r.names()) out << n << '|';
  out << '\n';
  for (const auto& row : r.data()) {
    for (const auto& v : row) out << v << '|';
    out << '\n';
  }
  return out.str() + r.error();
}

}  // namespace

TEST_SUITE("auth_matrix") {
  TEST_CASE("trust / md5 / scram-sha-256 x every login case and the admin console; the canary never shows") {
    PROXY_ONLY();
    const PgCluster& cluster = shared_cluster();
    create_roles(cluster);
    for (const std::string method : {"trust", "md5", "scram-sha-256"}) {
      CAPTURE(method);
      const int metrics_port = free_port();
      ProxyProcess proxy(cluster, matrix_options(method, cluster.port(), metrics_port));
      INFO("proxy log:\n" << proxy.log_tail(30));
      std::string seen_by_clients;  // every error, result and console answer a client received

      for (const Cell& cell : matrix(method)) {
        CAPTURE(cell.user);
        CAPTURE(cell.database);
        CAPTURE(cell.password == kCanary ? std::string("<canary>") : cell.password);
        std::string conninfo = "host=127.0.0.1 port=" + std::to_string(proxy.port()) +
                               " dbname=" + cell.database + " user=" + cell.user +
                               " password=" + cell.password + " sslmode=disable";
        ConnectResult r = connect(conninfo);
        seen_by_clients += r.error + "\n";
        if (cell.sqlstate.empty()) {
          REQUIRE_MESSAGE(r.ok, r.error);
          // A login is only a login if the session works: the console answers, a shard answers.
          PgResult q =
              r.conn.exec(cell.database == "shardwire" ? "SHOW VERSION" : "SELECT current_user", 20s);
          CHECK_MESSAGE(q.ok(), q.describe());
          if (cell.database != "shardwire" && q.ok()) CHECK(q.value() == cell.user);
          seen_by_clients += render(q);
        } else {
          CHECK_FALSE(r.ok);
          CHECK(r.sqlstate == cell.sqlstate);
          CHECK(fatal_message(r.error) == cell.message);
        }
      }

      // Console commands that list users, config, clients and servers.
      ConnectResult console = connect(proxy.conninfo("admin", "adminpw", "sslmode=disable dbname=shardwire"));
      REQUIRE_MESSAGE(console.ok, console.error);
      for (const char* command :
           {"SHOW USERS", "SHOW CONFIG", "SHOW CLIENTS", "SHOW SERVERS", "SHOW POOLS", "SHOW DATABASES",
            "SHOW STATS", "SHOW LISTS", "SHOW STATE", "SHOW SHARDS"}) {
        PgResult r = console.conn.exec(command, 20s);
        CHECK_MESSAGE(r.ok(), command << " -> " << r.describe());
        if (std::string(command) == "SHOW USERS")
          CHECK(contains(render(r), "sw_canary"));  // the user is listed
        seen_by_clients += render(r);
      }

      std::string metrics = scrape_metrics(metrics_port);
      CHECK(contains(metrics, "200 OK"));
      CHECK(contains(metrics, "shardwire_client_logins_total"));
      if (method != "trust") CHECK(contains(metrics, "result=\"bad_credentials\""));

      std::string log = proxy.log();
      CHECK(contains(log, "DEBUG"));  // the level the canary must not leak at
      CHECK_MESSAGE(!contains(log, kCanary), "the canary password is in the log");
      CHECK_MESSAGE(!contains(seen_by_clients, kCanary),
                    "the canary password reached a client or the console");
      CHECK_MESSAGE(!contains(metrics, kCanary), "the canary password is in /metrics");
      CHECK(proxy.running());
    }
  }

}  // TEST_SUITE
