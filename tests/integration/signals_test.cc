// Process control and logs: SIGHUP reload (and a broken file that is refused with file:line),
// SIGTERM draining open transactions (idle clients closed with 57P01, new ones refused, /ready
// answering 503, what is left closed after shutdown_timeout, exit 0), SIGINT exiting at once,
// no secrets in the log, and
// SIGSTOP/SIGCONT: time the process was stopped does not count against its timeouts.
#include <sys/wait.h>

#include <csignal>
#include <fstream>
#include <future>
#include <regex>
#include <sstream>

#include "harness/http_probe.h"
#include "harness/tcp_forwarder.h"
#include "it_test.h"

using namespace it;

namespace {

std::string replace_line(const std::string& text, const std::string& needle, const std::string& with) {
  std::istringstream in(text);
  std::string line, out;
  bool done = false;
  while (std::getline(in, line)) {
    if (!done && line.find(needle) != std::string::npos) {
      out += with + "\n";
      done = true;
    } else {
      out += line + "\n";
    }
  }
  REQUIRE_MESSAGE(done, "no line containing `" << needle << "`");
  return out;
}

// The state letter of /proc/<pid>/stat ('T' when stopped).
char process_state(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() ? '?' : stat[paren + 2];
}

}  // namespace

TEST_SUITE("signals") {
  TEST_CASE(
      "SIGSTOP/SIGCONT: a server login under way does not time out for the time the process was stopped") {
    PROXY_ONLY();
    TcpForwarder relay(shared_cluster().port());  // the shard, behind a relay the test can freeze
    ProxyOptions o;
    o.server_connect_timeout = "1s";
    o.workers = 1;
    ProxyProcess proxy(relay.port(), o);
    INFO("proxy log:\n" << proxy.log_tail());
    // The first client keeps its server in a transaction, so the second one needs a new server.
    PgConn first = connect_or_throw(proxy.conninfo());
    REQUIRE_OK(first.exec("BEGIN"));
    REQUIRE_OK(first.exec("SELECT 1"));

    relay.freeze(true);  // the new server's login waits in the relay
    auto second = std::async(std::launch::async, [&]() -> std::string {
      ConnectResult c = connect(proxy.conninfo(), 20s);
      if (!c.ok) return "connect: " + c.error;
      PgResult r = c.conn.exec("SELECT 2", 20s);
      return r.ok() ? r.value() : r.describe();
    });
    std::this_thread::sleep_for(300ms);
    REQUIRE(proxy.signal(SIGSTOP));
    REQUIRE(wait_until([&] { return process_state(proxy.pid()) == 'T'; }, 2s, 10ms));
    std::this_thread::sleep_for(2500ms);  // 2.5 x server_connect_timeout, stopped
    relay.freeze(false);                  // the server answers while shardwire is stopped
    std::this_thread::sleep_for(300ms);
    CHECK(second.wait_for(0ms) == std::future_status::timeout);  // nothing could answer meanwhile
    REQUIRE(proxy.signal(SIGCONT));
    REQUIRE(second.wait_for(30s) == std::future_status::ready);
    CHECK(second.get() == "2");
    CHECK_FALSE(contains(proxy.log(), "server_connect_timeout expired"));
    REQUIRE_OK(first.exec("COMMIT"));
  }

  TEST_CASE("SIGHUP reloads the config; a broken file keeps the running config and the log names file:line") {
    PROXY_ONLY();
    ProxyOptions o;
    ProxyProcess p(shared_cluster(), o);
    INFO("proxy log:\n" << p.log_tail());
    PgConn existing = connect_or_throw(p.conninfo());
    ConnectResult before = connect(p.conninfo("app2", "pw2"));
    CHECK_FALSE(before.ok);

    // A valid change: a second user.
    ProxyOptions o2 = o;
    o2.users.push_back({"app2", "pw2"});
    std::string good = render_config(o2, p.port(), shared_cluster().port());
    p.write_config(good);
    REQUIRE(p.signal(SIGHUP));
    std::string last;
    bool reloaded = wait_until(
        [&] {
          ConnectResult c = connect(p.conninfo("app2", "pw2"));
          last = c.error;
          return c.ok;
        },
        10s, 100ms);
    INFO("last error for app2: " << last);
    CHECK_MESSAGE(reloaded, "the new user could not log in after SIGHUP");

    // A broken value: refused, named by file:line, nothing changes.
    std::string broken = replace_line(good, "  size: ", "  size: not-a-number");
    int line = line_of(broken, "size: not-a-number");
    REQUIRE(line > 0);
    p.write_config(broken);
    REQUIRE(p.signal(SIGHUP));
    std::string where = p.config_path() + ":" + std::to_string(line);
    CHECK_MESSAGE(p.wait_for_log(where, 10s), "the log does not name " << where);
    CHECK(p.running());
    CHECK(existing.value("SELECT 'existing-still-served'") == "existing-still-served");
    ConnectResult app2 = connect(p.conninfo("app2", "pw2"));
    CHECK_MESSAGE(app2.ok, "the running config was not kept: " << app2.error);
    ConnectResult app = connect(p.conninfo());
    CHECK_MESSAGE(app.ok, app.error);

    // A YAML syntax error.
    std::string syntax = replace_line(good, "  mode: ", "  mode: [transaction");
    p.write_config(syntax);
    size_t log_size = p.log().size();
    REQUIRE(p.signal(SIGHUP));
    std::regex file_line(std::regex_replace(p.config_path(), std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                         ":[0-9]+");
    bool named =
        wait_until([&] { return std::regex_search(p.log().substr(log_size), file_line); }, 10s, 50ms);
    CHECK_MESSAGE(named, "no file:line for the YAML syntax error");
    CHECK(p.running());
    CHECK(existing.value("SELECT 'still-served'") == "still-served");
    ConnectResult app2_again = connect(p.conninfo("app2", "pw2"));
    CHECK_MESSAGE(app2_again.ok, app2_again.error);
  }

  TEST_CASE("SIGTERM: stops accepting, lets the open transaction COMMIT, then exits 0") {
    PROXY_ONLY();
    std::string table = unique_name("sigterm");
    PgConn admin = shared_cluster().admin("app");
    REQUIRE_OK(admin.exec("CREATE TABLE " + table + " (id int)"));
    ProxyProcess p(shared_cluster());
    INFO("proxy log:\n" << p.log_tail());
    PgConn a = connect_or_throw(p.conninfo());
    REQUIRE_OK(a.exec("BEGIN"));
    REQUIRE_OK(a.exec("INSERT INTO " + table + " VALUES (1)"));

    REQUIRE(p.signal(SIGTERM));
    std::string last;
    bool refusing = wait_until(
        [&] {
          ConnectResult c = connect(p.conninfo(), 3s);
          if (!c.ok) return true;
          PgResult r = c.conn.exec("SELECT 1", 3s);
          last = r.describe();
          return !r.ok();
        },
        5s, 100ms);
    CHECK_MESSAGE(refusing, "new clients are still served after SIGTERM: " << last);
    sleep_ms(300);
    CHECK_MESSAGE(p.running(), "exited while a transaction was open");

    PgResult ins = a.exec("INSERT INTO " + table + " VALUES (2)");
    CHECK_MESSAGE(ins.ok(), ins.describe());
    PgResult commit = a.exec("COMMIT");
    CHECK_MESSAGE(commit.ok(), commit.describe());
    auto status = p.wait_exit(10s);
    REQUIRE_MESSAGE(status.has_value(), "still running 10 s after the last transaction ended");
    CHECK(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) == 0);
    CHECK(admin.value("SELECT count(*) FROM " + table) == "2");
    admin.exec("DROP TABLE " + table);
  }

  TEST_CASE(
      "SIGTERM drains: the open transaction commits, the idle client gets 57P01, new clients are refused, "
      "/ready says 503, and past shutdown_timeout the rest is closed and shardwire exits 0") {
    PROXY_ONLY();
    std::string table = unique_name("drain");
    PgConn admin = shared_cluster().admin("app");
    REQUIRE_OK(admin.exec("CREATE TABLE " + table + " (id int)"));
    ProxyOptions o;
    const int metrics_port = free_port();
    o.extra_yaml =
        "shutdown_timeout: 3s\nmetrics:\n  listen: \"127.0.0.1:" + std::to_string(metrics_port) + "\"\n";
    ProxyProcess p(shared_cluster(), o);
    INFO("proxy log:\n" << p.log_tail());
    CHECK(http_get(metrics_port, "/ready").status == 200);
    PgConn finishing = connect_or_throw(p.conninfo());  // will commit during the drain
    REQUIRE_OK(finishing.exec("BEGIN"));
    REQUIRE_OK(finishing.exec("INSERT INTO " + table + " VALUES (1)"));
    PgConn stuck = connect_or_throw(p.conninfo());  // never ends its transaction
    REQUIRE_OK(stuck.exec("BEGIN"));
    REQUIRE_OK(stuck.exec("INSERT INTO " + table + " VALUES (100)"));
    PgConn idle = connect_or_throw(p.conninfo());
    CHECK(idle.value("SELECT 1") == "1");

    REQUIRE(p.signal(SIGTERM));
    auto signalled = std::chrono::steady_clock::now();
    HttpReply ready;
    CHECK(wait_until([&] { return (ready = http_get(metrics_port, "/ready")).status == 503; }, 2s, 50ms));
    CHECK_MESSAGE(contains(ready.body, "shutting down"), ready.body);
    ConnectResult late = connect(p.conninfo(), 2s);
    CHECK_MESSAGE(!late.ok, "a new client was accepted after SIGTERM");
    PgResult closed = idle.exec("SELECT 1", 2s);
    CHECK_FALSE(closed.ok());
    CHECK_MESSAGE(contains(closed.describe(), "terminating connection due to administrator command"),
                  closed.describe());

    REQUIRE_OK(finishing.exec("INSERT INTO " + table + " VALUES (2)"));
    REQUIRE_OK(finishing.exec("COMMIT"));
    CHECK(p.running());  // `stuck` still holds its transaction

    auto status = p.wait_exit(6s);
    REQUIRE_MESSAGE(status.has_value(), "still running 6 s after SIGTERM with shutdown_timeout 3s");
    const long long exited_ms = ms_since(signalled);
    MESSAGE("exited " << exited_ms << " ms after SIGTERM (shutdown_timeout 3 s)");
    CHECK(exited_ms >= 2900);
    CHECK(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) == 0);
    CHECK(contains(p.log(), "shutdown_timeout (3000 ms) passed"));
    CHECK_FALSE(stuck.exec("COMMIT", 2s).ok());
    CHECK(wait_until(
        [&] { return admin.value("SELECT string_agg(id::text, ',' ORDER BY id) FROM " + table) == "1,2"; },
        5s, 100ms));
    admin.exec("DROP TABLE " + table);
  }

  TEST_CASE("SIGTERM with no clients exits 0 promptly") {
    PROXY_ONLY();
    ProxyProcess p(shared_cluster());
    INFO("proxy log:\n" << p.log_tail());
    PgConn a = connect_or_throw(p.conninfo());
    CHECK(a.value("SELECT 1") == "1");
    a.reset();
    REQUIRE(p.signal(SIGTERM));
    auto status = p.wait_exit(5s);
    REQUIRE(status.has_value());
    CHECK(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) == 0);
  }

  TEST_CASE("SIGINT exits at once, abandoning the open transaction") {
    PROXY_ONLY();
    std::string table = unique_name("sigint");
    PgConn admin = shared_cluster().admin("app");
    REQUIRE_OK(admin.exec("CREATE TABLE " + table + " (id int)"));
    ProxyProcess p(shared_cluster());
    INFO("proxy log:\n" << p.log_tail());
    PgConn a = connect_or_throw(p.conninfo());
    REQUIRE_OK(a.exec("BEGIN"));
    REQUIRE_OK(a.exec("INSERT INTO " + table + " VALUES (1)"));
    std::string pid = a.value("SELECT pg_backend_pid()");
    auto start = std::chrono::steady_clock::now();
    REQUIRE(p.signal(SIGINT));
    // Waiting for the open transaction (SIGTERM's shutdown) would never end: 20 s guards a hang.
    auto status = p.wait_exit(20s);
    REQUIRE_MESSAGE(status.has_value(), "still running 20 s after SIGINT, with a transaction open");
    MESSAGE("exited " << ms_since(start) << " ms after SIGINT");
    CHECK(contains(p.log(), "stopping now"));
    CHECK_FALSE(a.exec("COMMIT", 5s).ok());
    PgConn pg = shared_cluster().admin("postgres");
    CHECK(wait_until(
        [&] { return pg.value("SELECT count(*) FROM pg_stat_activity WHERE pid = " + pid) == "0"; }, 5s));
    CHECK(admin.value("SELECT count(*) FROM " + table) == "0");
    admin.exec("DROP TABLE " + table);
  }

  TEST_CASE("the log never contains a password or a bound parameter value, and every line has a level") {
    PROXY_ONLY();
    const std::string client_pw = "Canary-Client-Pw-7b2c";
    const std::string shard_pw = "Canary-Shard-Pw-5e1d";
    const std::string wrong_pw = "Canary-Wrong-Pw-91ab";
    const std::string md5_pw = "Canary-Md5-Pw-44d0";
    const std::string param = "Canary-Param-Value-4f0e";
    const std::string reload_pw = "Canary-Reload-Pw-33aa";
    const std::string error_param = "Canary-Param-In-Error-8c1f";
    std::string role = unique_name("canary_role");
    PgConn pg = shared_cluster().admin("postgres");
    REQUIRE_OK(pg.exec("CREATE ROLE " + role + " LOGIN SUPERUSER PASSWORD '" + shard_pw + "'"));

    ProxyOptions o;
    o.log_level = "debug";
    o.users = {{"app", client_pw}, {"md5user", md5_pw}};
    o.shard_user = role;
    o.shard_password = shard_pw;
    ProxyProcess p(shared_cluster(), o);
    INFO("proxy log:\n" << p.log_tail());

    PgConn a = connect_or_throw(p.conninfo("app", client_pw));
    CHECK(a.exec_params("SELECT $1::text", {param}).value() == param);
    REQUIRE_OK(a.prepare("canary_stmt", "SELECT length($1::text)"));
    CHECK(a.exec_prepared("canary_stmt", {param}).value() == std::to_string(param.size()));
    // PostgreSQL's error text quotes this value; the proxy must not log it either.
    CHECK(a.exec_params("SELECT $1::int", {error_param}).sqlstate() == "22P02");
    CHECK_FALSE(connect(p.conninfo("app", wrong_pw)).ok);
    CHECK_FALSE(connect(p.conninfo("nobody", wrong_pw)).ok);

    // The same config through md5, and reloads (one valid, one broken at a password line).
    ProxyOptions m = o;
    m.auth_method = "md5";
    p.write_config(render_config(m, p.port(), shared_cluster().port()));
    REQUIRE(p.signal(SIGHUP));
    CHECK(wait_until([&] { return connect(p.conninfo("md5user", md5_pw)).ok; }, 10s, 100ms));
    CHECK_FALSE(connect(p.conninfo("md5user", wrong_pw)).ok);
    std::string broken =
        replace_line(render_config(m, p.port(), shared_cluster().port()), "password: \"" + md5_pw + "\"",
                     "      password: { x: " + reload_pw + " }");
    p.write_config(broken);
    REQUIRE(p.signal(SIGHUP));
    CHECK(p.wait_for_log(p.config_path() + ":", 10s));
    CHECK(p.running());

    REQUIRE(p.signal(SIGTERM));
    a.reset();
    p.wait_exit(10s);
    std::string log = p.log();
    REQUIRE_FALSE(log.empty());
    for (const std::string& secret : {client_pw, shard_pw, wrong_pw, md5_pw, param, reload_pw, error_param})
      CHECK_MESSAGE(!contains(log, secret), "the log contains `" << secret << "`");
    std::istringstream lines(log);
    std::string line;
    int n = 0;
    std::regex level(R"(\b(DEBUG|INFO|WARN|WARNING|ERROR|FATAL|debug|info|warn|warning|error|fatal)\b)");
    while (std::getline(lines, line)) {
      if (line.empty()) continue;
      ++n;
      CHECK_MESSAGE(std::regex_search(line, level), "log line without a level: " << line);
    }
    CHECK(n >= 3);
    pg.exec("DROP ROLE " + role);
  }

}  // TEST_SUITE
