// Two clients, one server (pool.size 1, so B always gets the server A used): nothing of A's
// session reaches B, in transaction and in session pooling, with a superuser and a non-superuser
// application role; and A keeps what PostgreSQL keeps for it (docs/architecture.md §5.7).
#include <libpq-fe.h>

#include <functional>
#include <string>
#include <vector>

#include "it_test.h"

using namespace it;

namespace {

const char* const kModes[] = {"transaction", "session"};

// Roles and tables of this suite, made once per cluster (the cluster is shared by the suite).
void prepare_cluster() {
  static bool done = false;
  if (done) return;
  PgConn admin = shared_cluster().admin("app");
  REQUIRE_OK(admin.exec(
      "DO $$ BEGIN "
      "IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'iso_low') THEN CREATE ROLE iso_low; END IF; "
      "IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'iso_app') THEN "
      "CREATE ROLE iso_app LOGIN NOSUPERUSER PASSWORD 'secret'; END IF; END $$"));
  REQUIRE_OK(admin.exec("GRANT iso_low TO iso_app"));
  REQUIRE_OK(admin.exec("GRANT CREATE, TEMPORARY ON DATABASE app TO iso_app"));
  REQUIRE_OK(admin.exec("GRANT USAGE, CREATE ON SCHEMA public TO iso_app, iso_low"));
  REQUIRE_OK(admin.exec("DROP TABLE IF EXISTS iso_acct, iso_2pc, iso_serial"));
  REQUIRE_OK(admin.exec("CREATE TABLE iso_acct (v text); INSERT INTO iso_acct VALUES ('real')"));
  REQUIRE_OK(admin.exec("CREATE TABLE iso_2pc (x int)"));
  REQUIRE_OK(admin.exec("CREATE TABLE iso_serial (id serial, v text)"));
  REQUIRE_OK(admin.exec("GRANT ALL ON iso_acct, iso_2pc, iso_serial, iso_serial_id_seq TO PUBLIC"));
  done = true;
}

ProxyOptions options_for(const std::string& mode, bool superuser) {
  ProxyOptions options;
  options.pool_mode = mode;
  options.pool_size = 1;  // B always gets A's server
  options.workers = 1;
  options.query_wait_timeout = "3s";
  if (!superuser) {
    options.shard_user = "iso_app";
    options.shard_password = "secret";
  }
  return options;
}

std::string login_role(bool superuser) { return superuser ? "app" : "iso_app"; }

bool idle(const PgConn& c) { return PQtransactionStatus(c.get()) == PQTRANS_IDLE; }

}  // namespace

TEST_SUITE("isolation") {
  TEST_CASE("SET ROLE, set_config('role') and SET SESSION AUTHORIZATION reach no other client") {
    PROXY_ONLY();
    prepare_cluster();
    for (const char* mode : kModes) {
      for (bool superuser : {true, false}) {
        ProxyProcess proxy(shared_cluster(), options_for(mode, superuser));
        std::vector<std::string> statements = {"SET ROLE iso_low",
                                               "SELECT set_config('role', 'iso_low', false)"};
        if (superuser) statements.push_back("SET SESSION AUTHORIZATION iso_low");
        for (const std::string& sql : statements) {
          CAPTURE(mode);
          CAPTURE(superuser);
          CAPTURE(sql);
          INFO("proxy log:\n" << proxy.log_tail());
          {
            PgConn a = connect_or_throw(proxy.conninfo());
            REQUIRE_OK(a.exec(sql));
            CHECK(a.value("SELECT current_user") == "iso_low");
            if (std::string(mode) == "transaction") {
              // B runs between A's transactions on A's server; A's role comes back for A.
              PgConn b = connect_or_throw(proxy.conninfo());
              CHECK(b.value("SELECT current_user") == login_role(superuser));
              CHECK(b.value("SELECT session_user") == login_role(superuser));
              b.reset();
              CHECK(a.value("SELECT current_user") == "iso_low");
            }
          }
          PgConn next = connect_or_throw(proxy.conninfo());
          CHECK(next.value("SELECT current_user") == login_role(superuser));
          CHECK(next.value("SELECT session_user") == login_role(superuser));
          CHECK(next.value("SHOW role") == "none");
        }
      }
    }
  }

  TEST_CASE("set_config(..., false) is a SET: replayed for its client, never seen by the next") {
    PROXY_ONLY();
    prepare_cluster();
    for (const char* mode : kModes) {
      ProxyProcess proxy(shared_cluster(), options_for(mode, false));
      struct Way {
        const char* what;
        std::function<PgResult(PgConn&)> run;
      };
      const std::vector<Way> ways = {
          {"simple", [](PgConn& c) { return c.exec("SELECT set_config('search_path', 'nowhere', false)"); }},
          {"extended",
           [](PgConn& c) { return c.exec_params("SELECT set_config('search_path', 'nowhere', false)", {}); }},
          {"extended, binary results",
           [](PgConn& c) {
             return c.exec_extended("SELECT set_config('search_path', 'nowhere', false)",
                                    ResultFormat::Binary);
           }},
          {"SET, extended, binary results",
           [](PgConn& c) { return c.exec_extended("SET search_path = nowhere", ResultFormat::Binary); }},
      };
      for (const Way& way : ways) {
        CAPTURE(mode);
        CAPTURE(way.what);
        INFO("proxy log:\n" << proxy.log_tail());
        {
          PgConn a = connect_or_throw(proxy.conninfo());
          REQUIRE_OK(way.run(a));
          CHECK(a.value("SHOW search_path") == "nowhere");
          if (std::string(mode) == "transaction") {
            PgConn b = connect_or_throw(proxy.conninfo());
            CHECK(b.value("SHOW search_path") == "\"$user\", public");
            CHECK(b.value("SELECT v FROM iso_acct") == "real");
            b.reset();
            CHECK(a.value("SHOW search_path") == "nowhere");
          }
        }
        PgConn next = connect_or_throw(proxy.conninfo());
        CHECK(next.value("SHOW search_path") == "\"$user\", public");
      }
    }
  }

  TEST_CASE("currval and lastval never give another client's sequence values") {
    PROXY_ONLY();
    prepare_cluster();
    for (const char* mode : kModes) {
      CAPTURE(mode);
      ProxyProcess proxy(shared_cluster(), options_for(mode, false));
      INFO("proxy log:\n" << proxy.log_tail());
      const bool pooled = std::string(mode) == "transaction";
      PgConn a = connect_or_throw(proxy.conninfo());
      const std::string id_a = a.value("INSERT INTO iso_serial (v) VALUES ('a') RETURNING id");
      // A keeps its values on the server it gets back (the only one).
      CHECK(a.value("SELECT currval('iso_serial_id_seq')") == id_a);
      CHECK(a.value("SELECT lastval()") == id_a);
      if (!pooled) a.reset();  // session pooling: B gets the server once A has left
      PgConn b = connect_or_throw(proxy.conninfo());
      CHECK(b.exec("SELECT currval('iso_serial_id_seq')").sqlstate() == "55000");
      CHECK(b.exec("SELECT lastval()").sqlstate() == "55000");
      const std::string id_b = b.value("SELECT nextval('iso_serial_id_seq')");
      CHECK(b.value("SELECT lastval()") == id_b);
      if (!pooled) continue;
      // A's values went with B's turn on the server: A gets what a new server would say, never B's.
      b.reset();
      CHECK(a.exec("SELECT currval('iso_serial_id_seq')").sqlstate() == "55000");
      CHECK(a.exec("SELECT lastval()").sqlstate() == "55000");
    }
  }

  TEST_CASE("a client gets its own idle server back, with its currval") {
    PROXY_ONLY();
    prepare_cluster();
    ProxyOptions options = options_for("transaction", false);
    options.pool_size = 2;
    ProxyProcess proxy(shared_cluster(), options);
    INFO("proxy log:\n" << proxy.log_tail());
    PgConn a = connect_or_throw(proxy.conninfo());
    PgConn b = connect_or_throw(proxy.conninfo());
    for (PgConn* c : {&a, &b}) REQUIRE_OK(c->exec("BEGIN; SELECT 1"));  // one server each
    for (PgConn* c : {&a, &b}) REQUIRE_OK(c->exec("COMMIT"));           // B's is the warmest idle one
    const std::string id_a = a.value("SELECT nextval('iso_serial_id_seq')");
    CHECK(b.value("SELECT 1") == "1");
    CHECK(a.value("SELECT currval('iso_serial_id_seq')") == id_a);
  }

  TEST_CASE("a SET undone by ROLLBACK TO SAVEPOINT stays undone; RELEASE keeps it") {
    PROXY_ONLY();
    prepare_cluster();
    for (const char* mode : kModes) {
      ProxyProcess proxy(shared_cluster(), options_for(mode, true));
      struct Script {
        std::vector<std::string> statements;
        std::string date;  // '01/02/2024'::date afterwards
      };
      const std::vector<Script> scripts = {
          {{"BEGIN", "SAVEPOINT a", "SET datestyle = 'ISO, DMY'", "ROLLBACK TO SAVEPOINT a", "COMMIT"},
           "2024-01-02"},
          {{"BEGIN", "SELECT 1", "SAVEPOINT a", "SET datestyle = 'ISO, DMY'", "ROLLBACK TO a", "COMMIT"},
           "2024-01-02"},
          {{"BEGIN", "SELECT 1", "SAVEPOINT a", "SET datestyle = 'ISO, DMY'", "RELEASE a", "COMMIT"},
           "2024-02-01"},
          {{"BEGIN", "SELECT 1", "SET datestyle = 'ISO, DMY'", "ROLLBACK"}, "2024-01-02"},
          {{"BEGIN", "SELECT 1", "SET LOCAL datestyle = 'ISO, DMY'", "COMMIT"}, "2024-01-02"},
      };
      for (const Script& script : scripts) {
        CAPTURE(mode);
        CAPTURE(script.statements.at(1));
        CAPTURE(script.statements.at(script.statements.size() - 2));
        INFO("proxy log:\n" << proxy.log_tail());
        PgConn a = connect_or_throw(proxy.conninfo());
        for (const std::string& sql : script.statements) REQUIRE_OK(a.exec(sql));
        if (std::string(mode) == "transaction") {
          PgConn b = connect_or_throw(proxy.conninfo());
          CHECK(b.value("SHOW datestyle") == "ISO, MDY");
        }
        CHECK(a.value("SELECT '01/02/2024'::date") == script.date);
      }
    }
  }

  TEST_CASE("a SET in a rolled back transaction whose server was reset first stays undone") {
    PROXY_ONLY();
    prepare_cluster();
    ProxyProcess proxy(shared_cluster(), options_for("transaction", true));
    INFO("proxy log:\n" << proxy.log_tail());
    PgConn a = connect_or_throw(proxy.conninfo());
    REQUIRE_OK(a.exec("SET application_name = 'a'"));  // A's settings differ from B's
    PgConn b = connect_or_throw(proxy.conninfo());
    CHECK(b.value("SELECT 1") == "1");  // the server now has B's settings
    // The SET rides with the deferred BEGIN; the server is reset to A's settings first.
    REQUIRE_OK(a.exec("BEGIN"));
    REQUIRE_OK(a.exec("SET datestyle = 'ISO, DMY'"));
    CHECK(a.value("SELECT '01/02/2024'::date") == "2024-02-01");
    REQUIRE_OK(a.exec("ROLLBACK"));
    CHECK(b.value("SELECT 1") == "1");
    CHECK(a.value("SELECT '01/02/2024'::date") == "2024-01-02");
  }

  TEST_CASE(
      "temporary objects, held cursors, LISTEN, advisory locks: the client's own, the next never sees them") {
    PROXY_ONLY();
    prepare_cluster();
    struct Form {
      const char* create;
      const char* check;  // what A sees in a later transaction, and B does not
      const char* in_a;
      const char* in_b;
      const char* reason;           // what the log names as the pin's reason
      bool superuser_only = false;  // LOAD from outside $libdir/plugins needs a superuser
    };
    const std::vector<Form> forms = {
        {"CREATE TEMP TABLE iso_acct AS SELECT 'temp'::text AS v", "SELECT v FROM iso_acct", "temp", "real",
         "a temporary table"},
        {"SELECT 'temp'::text AS v INTO TEMP iso_acct", "SELECT v FROM iso_acct", "temp", "real",
         "a temporary table"},
        {"CREATE TEMP TABLE iso_acct (v text)", "SELECT count(*) FROM iso_acct", "0", "1",
         "a temporary table"},
        {"CREATE TEMP VIEW iso_acct AS SELECT 'temp'::text AS v", "SELECT v FROM iso_acct", "temp", "real",
         "a temporary view"},
        {"CREATE TEMP SEQUENCE iso_seq", "SELECT to_regclass('iso_seq') IS NOT NULL", "t", "f",
         "a temporary sequence"},
        {"CREATE FUNCTION pg_temp.iso_f() RETURNS text LANGUAGE sql AS $$SELECT 'temp'$$",
         "SELECT count(*) FROM pg_proc WHERE proname = 'iso_f'", "1", "0", "a function in pg_temp"},
        {"DECLARE iso_c CURSOR WITH HOLD FOR SELECT 'temp'::text", "SELECT count(*) FROM pg_cursors", "1",
         "0", "a cursor WITH HOLD"},
        {"LISTEN iso_ch", "SELECT count(*) FROM pg_listening_channels()", "1", "0", "LISTEN"},
        {"SELECT pg_advisory_lock(4711)",
         "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()", "1", "0",
         "a session-level advisory lock"},
        {"SELECT set_config('search_path', 'now' || 'here', false)", "SHOW search_path", "nowhere",
         "\"$user\", public", "set_config() with arguments that are not literals"},
        // The library stays loaded in the server process: its settings exist there ('-1'), and
        // in a server that never loaded it they are unknown (NULL).
        {"LOAD 'auto_explain'",
         "SELECT coalesce(current_setting('auto_explain.log_min_duration', true), 'NULL')", "-1", "NULL",
         "LOAD of a library", true},
    };
    for (const char* mode : kModes) {
      for (bool superuser : {true, false}) {
        ProxyProcess proxy(shared_cluster(), options_for(mode, superuser));
        for (const Form& form : forms) {
          if (form.superuser_only && !superuser) continue;
          CAPTURE(mode);
          CAPTURE(superuser);
          CAPTURE(form.create);
          INFO("proxy log:\n" << proxy.log_tail());
          {
            PgConn a = connect_or_throw(proxy.conninfo());
            REQUIRE_OK(a.exec(form.create));
            CHECK(a.value(form.check) == form.in_a);
            CHECK(a.value(form.check) == form.in_a);  // and in the transaction after
          }
          if (std::string(mode) == "transaction")
            CHECK(proxy.wait_for_log(
                std::string("pinned to its servers until it disconnects: ") + form.reason, 2s));
          PgConn b = connect_or_throw(proxy.conninfo());
          CHECK(b.value(form.check) == form.in_b);
          CHECK(b.value("SELECT v FROM iso_acct") == "real");
          if (std::string(form.create).rfind("DECLARE", 0) == 0)
            CHECK_OK(b.exec("DECLARE iso_c CURSOR WITH HOLD FOR SELECT 1; CLOSE iso_c"));
        }
      }
    }
  }

  TEST_CASE("pool.max_pinned_clients: past it the statement is refused with a clear error") {
    PROXY_ONLY();
    prepare_cluster();
    ProxyOptions options = options_for("transaction", true);
    options.pool_size = 3;
    // One more key of the rendered pool map, after idle_timeout's value.
    options.idle_timeout = "60s\n  max_pinned_clients: 1";
    options.users = {{"app", "secret"}, {"admin", "secret"}};
    options.extra_yaml = "admin:\n  database: shardwire\n  users: [admin]\n";
    ProxyProcess proxy(shared_cluster(), options);
    INFO("proxy log:\n" << proxy.log_tail());
    PgConn a = connect_or_throw(proxy.conninfo());
    REQUIRE_OK(a.exec("CREATE TEMP TABLE iso_acct (v text)"));
    PgConn b = connect_or_throw(proxy.conninfo());
    PgResult refused = b.exec("CREATE TEMP TABLE iso_acct (v text)");
    CHECK(refused.sqlstate() == "53300");
    CHECK_MESSAGE(contains(refused.error(), "pool.max_pinned_clients"), refused.describe());
    CHECK(b.value("SELECT v FROM iso_acct") == "real");  // nothing was created, b goes on

    PgConn console = connect_or_throw(proxy.conninfo("admin", "secret", "sslmode=disable dbname=shardwire"));
    PgResult clients = console.exec("SHOW CLIENTS");
    REQUIRE(clients.ok());
    int pinned_col = -1;
    for (int i = 0; i < clients.cols(); ++i) {
      if (clients.names()[static_cast<size_t>(i)] == "pinned") pinned_col = i;
    }
    REQUIRE(pinned_col >= 0);
    int pinned = 0;
    for (int r = 0; r < clients.rows(); ++r) pinned += clients.value(r, pinned_col) == "a temporary table";
    CHECK(pinned == 1);
    PgResult pools = console.exec("SHOW POOLS");
    REQUIRE(pools.ok());
    CHECK(pools.value(0, pools.cols() - 1) == "1");

    a.reset();  // its slot is free once the proxy saw it leave
    bool created = false;
    for (int i = 0; i < 50 && !created; ++i) {
      created = b.exec("CREATE TEMP TABLE iso_acct (v text)").ok();
      if (!created) sleep_ms(50);
    }
    CHECK(created);
  }

  TEST_CASE("a server a library was loaded into is closed when its client leaves, never reused") {
    PROXY_ONLY();
    prepare_cluster();
    const std::string loaded =
        "SELECT coalesce(current_setting('auto_explain.log_min_duration', true), 'NULL')";
    // How A loads the library: simple or extended protocol, alone or in a transaction block
    // (LOAD is not transactional: a ROLLBACK leaves the library loaded).
    const std::vector<std::pair<const char*, std::function<void(PgConn&)>>> ways = {
        {"simple", [](PgConn& a) { REQUIRE_OK(a.exec("LOAD 'auto_explain'")); }},
        {"extended", [](PgConn& a) { REQUIRE_OK(a.exec_params("LOAD 'auto_explain'", {})); }},
        {"in a transaction rolled back",
         [](PgConn& a) {
           REQUIRE_OK(a.exec("BEGIN"));
           REQUIRE_OK(a.exec_params("LOAD 'auto_explain'", {}));
           REQUIRE_OK(a.exec("ROLLBACK"));
         }},
    };
    for (const char* mode : kModes) {
      ProxyProcess proxy(shared_cluster(), options_for(mode, true));
      for (const auto& way : ways) {
        CAPTURE(mode);
        CAPTURE(way.first);
        INFO("proxy log:\n" << proxy.log_tail());
        std::string server_of_a;
        {
          PgConn a = connect_or_throw(proxy.conninfo());
          server_of_a = a.value("SELECT pg_backend_pid()");
          way.second(a);
          CHECK(a.value(loaded) == "-1");
          CHECK(a.value("SELECT pg_backend_pid()") == server_of_a);  // A keeps its server
        }
        PgConn b = connect_or_throw(proxy.conninfo());
        CHECK(b.value(loaded) == "NULL");
        CHECK(b.value("SELECT pg_backend_pid()") != server_of_a);
      }
    }
  }

  TEST_CASE("DISCARD SEQUENCES, PLANS and TEMP act on the client's own session and leave nothing") {
    PROXY_ONLY();
    prepare_cluster();
    for (const char* mode : kModes) {
      CAPTURE(mode);
      ProxyProcess proxy(shared_cluster(), options_for(mode, false));
      INFO("proxy log:\n" << proxy.log_tail());
      {
        PgConn a = connect_or_throw(proxy.conninfo());
        // SEQUENCES: A's values go, on the server that held them.
        const std::string id = a.value("SELECT nextval('iso_serial_id_seq')");
        CHECK(a.value("SELECT currval('iso_serial_id_seq')") == id);
        REQUIRE_OK(a.exec("DISCARD SEQUENCES"));
        CHECK(a.exec("SELECT currval('iso_serial_id_seq')").sqlstate() == "55000");
        // PLANS: the plans go, A's prepared statements (SQL and protocol level) stay.
        REQUIRE_OK(a.exec("PREPARE iso_q AS SELECT v FROM iso_acct"));
        REQUIRE_OK(a.prepare("iso_p", "SELECT v FROM iso_acct WHERE v = $1"));
        REQUIRE_OK(a.exec("DISCARD PLANS"));
        CHECK(a.value("EXECUTE iso_q") == "real");
        PgResult bound = a.exec_prepared("iso_p", {std::string("real")});
        CHECK_MESSAGE(bound.ok(), bound.describe());
        if (bound.ok()) CHECK(bound.value() == "real");
        // TEMP: A's temporary table goes (A is pinned in transaction pooling).
        REQUIRE_OK(a.exec("CREATE TEMP TABLE iso_acct AS SELECT 'temp'::text AS v"));
        CHECK(a.value("SELECT v FROM iso_acct") == "temp");
        REQUIRE_OK(a.exec("DISCARD TEMP"));
        CHECK(a.value("SELECT v FROM iso_acct") == "real");
      }
      PgConn b = connect_or_throw(proxy.conninfo());
      CHECK(b.exec("SELECT currval('iso_serial_id_seq')").sqlstate() == "55000");
      CHECK(b.value("SELECT count(*) FROM pg_prepared_statements") == "0");
      CHECK(b.value("SELECT v FROM iso_acct") == "real");
    }
  }

  TEST_CASE("a pinning statement that fails outside a transaction block pins nobody") {
    PROXY_ONLY();
    prepare_cluster();
    ProxyOptions options = options_for("transaction", true);
    options.idle_timeout = "60s\n  max_pinned_clients: 1";
    ProxyProcess proxy(shared_cluster(), options);
    INFO("proxy log:\n" << proxy.log_tail());
    PgConn a = connect_or_throw(proxy.conninfo());
    CHECK(a.exec("CREATE TEMP TABLE iso_failed AS SELECT 1 / 0 AS x").sqlstate() == "22012");
    // A's server (the only one) is back in the pool, and the pin slot is free.
    PgConn b = connect_or_throw(proxy.conninfo());
    CHECK(b.value("SELECT v FROM iso_acct") == "real");
    CHECK_OK(b.exec("CREATE TEMP TABLE iso_pinned (v text)"));
  }

  TEST_CASE("PREPARE TRANSACTION ends the transaction; a refused one ends it with a rollback") {
    PROXY_ONLY();
    prepare_cluster();
    for (const char* mode : kModes) {
      CAPTURE(mode);
      ProxyProcess proxy(shared_cluster(), options_for(mode, true));
      INFO("proxy log:\n" << proxy.log_tail());
      PgConn admin = shared_cluster().admin("app");
      REQUIRE_OK(admin.exec("TRUNCATE iso_2pc"));
      {
        PgConn a = connect_or_throw(proxy.conninfo());
        // Prepared on the one server (pool.size 1), which goes back to the pool: another client
        // commits it.
        REQUIRE_OK(a.exec("BEGIN"));
        REQUIRE_OK(a.exec("INSERT INTO iso_2pc VALUES (1)"));
        PgResult prepared = a.exec("PREPARE TRANSACTION 'iso_g1'");
        CHECK_MESSAGE(prepared.ok(), prepared.describe());
        CHECK(idle(a));
        REQUIRE_OK(a.exec("INSERT INTO iso_2pc VALUES (2)"));  // autocommit, as in PostgreSQL
        if (std::string(mode) != "session") {
          PgConn b = connect_or_throw(proxy.conninfo());
          CHECK_OK(b.exec("COMMIT PREPARED 'iso_g1'"));
        } else {
          CHECK_OK(a.exec("COMMIT PREPARED 'iso_g1'"));
        }
        // An empty transaction is prepared too (nothing was begun on a server yet).
        REQUIRE_OK(a.exec("BEGIN"));
        CHECK_OK(a.exec("PREPARE TRANSACTION 'iso_g2'"));
        CHECK(idle(a));
        CHECK_OK(a.exec("ROLLBACK PREPARED 'iso_g2'"));
        REQUIRE_OK(a.exec("INSERT INTO iso_2pc VALUES (3)"));
        // A gid of shardwire's own is refused, and the transaction rolled back, also in the
        // extended protocol (postgres.js), after a statement and before any.
        REQUIRE_OK(a.exec("BEGIN"));
        REQUIRE_OK(a.exec("INSERT INTO iso_2pc VALUES (4)"));
        CHECK(a.exec("PREPARE TRANSACTION 'shardwire_iso'").sqlstate() == "42602");
        CHECK(idle(a));
        for (const bool wrote : {true, false}) {
          CAPTURE(wrote);
          REQUIRE_OK(a.exec("BEGIN"));
          if (wrote) REQUIRE_OK(a.exec("INSERT INTO iso_2pc VALUES (4)"));
          PgResult extended = a.exec_params("PREPARE TRANSACTION 'shardwire_iso'", {});
          CHECK(extended.sqlstate() == "42602");
          CHECK(idle(a));
        }
      }
      CHECK(admin.value("SELECT string_agg(x::text, ',' ORDER BY x) FROM iso_2pc") == "1,2,3");
      CHECK(admin.value("SELECT count(*) FROM pg_prepared_xacts") == "0");
    }
  }
}
