// Real psql scripts through shardwire: \copy in both directions, errors inside transactions,
// meta-commands, notices, ON_ERROR_ROLLBACK savepoints.
#include "it_test.h"

using namespace it;

namespace {

// CSV exactly as COPY ... (FORMAT csv) writes it, so the round trip must be byte-identical.
std::string make_csv(int rows) {
  std::string out;
  for (int i = 1; i <= rows; ++i) {
    out += std::to_string(i) + ",name-" + std::to_string(i) + ",";
    if (i % 13 == 0)
      out += "\"two\nlines\"";
    else if (i % 11 == 0)
      out += "";  // NULL
    else if (i % 7 == 0)
      out += "\"quote \"\"inside\"\"\"";
    else if (i % 5 == 0)
      out += "\"has, comma\"";
    else if (i % 3 == 0)
      out += "unicode-\xc3\xa9\xe2\x82\xac";
    else
      out += "plain";
    out += "\n";
  }
  return out;
}

CommandResult run_psql(const Target& t, const std::string& script,
                       const std::string& extra_conn = "sslmode=disable",
                       std::vector<std::string> extra_args = {}) {
  std::vector<std::string> argv = {psql(), "-X", "-q", "-d", t.conninfo("app", "secret", extra_conn)};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  return run_command(argv, script, 120s);
}

}  // namespace

TEST_SUITE("psql") {
  TEST_CASE("psql script with \\copy in and out round-trips 20000 rows") {
    Target t(shared_cluster());
    TempDir tmp;
    const int rows = 20000;
    std::string csv = make_csv(rows);
    write_file(tmp.file("in.csv"), csv);
    std::string table = unique_name("copy_rt");
    std::string script =
        "\\set ON_ERROR_STOP 1\n"
        "CREATE TABLE " +
        table +
        " (id int PRIMARY KEY, name text NOT NULL, note text);\n"
        "\\copy " +
        table + " FROM '" + tmp.file("in.csv") +
        "' WITH (FORMAT csv)\n"
        "SELECT count(*) AS n, sum(id) AS s, count(*) FILTER (WHERE note IS NULL) AS nulls FROM " +
        table +
        " \\gset\n"
        "\\echo rows=:n sum=:s nulls=:nulls\n"
        "\\copy (SELECT * FROM " +
        table + " ORDER BY id) TO '" + tmp.file("out.csv") +
        "' WITH (FORMAT csv)\n"
        "BEGIN;\n"
        "UPDATE " +
        table +
        " SET note = 'updated' WHERE id <= 10;\n"
        "COMMIT;\n"
        "SELECT count(*) AS updated FROM " +
        table +
        " WHERE note = 'updated' \\gset\n"
        "\\echo updated=:updated\n"
        "\\copy " +
        table +
        " TO STDOUT WITH (FORMAT csv)\n"
        "DROP TABLE " +
        table +
        ";\n"
        "\\echo script-finished\n";
    CommandResult r = run_psql(t, script);
    INFO("psql: " << r.describe());
    INFO("proxy log:\n" << t.log_tail());
    CHECK(r.exit_code == 0);
    long long sum = static_cast<long long>(rows) * (rows + 1) / 2;
    int nulls = 0;
    for (int i = 1; i <= rows; ++i) nulls += (i % 13 != 0 && i % 11 == 0);
    CHECK(contains(r.out, "rows=" + std::to_string(rows) + " sum=" + std::to_string(sum) +
                              " nulls=" + std::to_string(nulls)));
    CHECK(contains(r.out, "updated=10"));
    CHECK(contains(r.out, "script-finished"));
    std::string out_csv = read_file(tmp.file("out.csv"));
    CHECK(out_csv.size() == csv.size());
    size_t diff = 0;
    while (diff < out_csv.size() && diff < csv.size() && out_csv[diff] == csv[diff]) ++diff;
    bool same = out_csv == csv;
    CHECK_MESSAGE(same, "\\copy out differs from \\copy in at byte "
                            << diff << ": `" << out_csv.substr(diff, 60) << "` instead of `"
                            << csv.substr(diff, 60) << "`");
    // \copy TO STDOUT went through CopyOut on psql's stdout: it holds every row once more.
    CHECK(r.out.size() > csv.size());
  }

  TEST_CASE("psql: an error inside a transaction, then ROLLBACK, leaves a usable connection") {
    Target t(shared_cluster());
    std::string table = unique_name("err_tx");
    PgConn admin = shared_cluster().admin("app");
    REQUIRE_OK(admin.exec("CREATE TABLE " + table + " (id int)"));
    std::string script =
        "BEGIN;\n"
        "INSERT INTO " +
        table +
        " VALUES (1);\n"
        "SELECT 1/0;\n"
        "SELECT 'after-error-in-aborted-tx';\n"
        "ROLLBACK;\n"
        "SELECT 'alive-' || 42 AS v;\n"
        "SELECT count(*) AS rows_after_rollback FROM " +
        table + ";\n";
    CommandResult r = run_psql(t, script, "sslmode=disable", {"-At"});
    INFO("psql: " << r.describe());
    INFO("proxy log:\n" << t.log_tail());
    CHECK(r.exit_code == 0);
    CHECK(contains(r.err, "division by zero"));
    CHECK(contains(r.err, "current transaction is aborted"));
    CHECK_FALSE(contains(r.out, "after-error-in-aborted-tx"));
    CHECK(contains(r.out, "alive-42"));
    CHECK(contains(r.out, "\n0\n"));  // the INSERT was rolled back
    admin.exec("DROP TABLE " + table);
  }

  TEST_CASE("psql: ON_ERROR_ROLLBACK savepoints, multi-statement lines, meta-commands, notices") {
    Target t(shared_cluster());
    std::string table = unique_name("psql_misc");
    std::string script =
        "\\set ON_ERROR_ROLLBACK on\n"
        "CREATE TABLE " +
        table +
        " (id int PRIMARY KEY, v text);\n"
        "BEGIN;\n"
        "INSERT INTO " +
        table +
        " VALUES (1, 'one');\n"
        "INSERT INTO " +
        table +
        " VALUES (1, 'duplicate');\n"  // fails; psql rolls back to its savepoint
        "INSERT INTO " +
        table +
        " VALUES (2, 'two');\n"
        "COMMIT;\n"
        "SELECT 'ids=' || string_agg(id::text, ',' ORDER BY id) FROM " +
        table +
        ";\n"
        "SELECT 'first' \\; SELECT 'second-of-two';\n"
        "\\d " +
        table +
        "\n"
        "\\dt " +
        table +
        "\n"
        "\\l app\n"
        "DO $$ BEGIN RAISE NOTICE 'notice-from-server %', 7; END $$;\n"
        "SELECT current_database() AS db \\gset\n"
        "\\echo db=:db\n"
        "DROP TABLE " +
        table + ";\n";
    CommandResult r = run_psql(t, script, "sslmode=disable", {"-At"});
    INFO("psql: " << r.describe());
    INFO("proxy log:\n" << t.log_tail());
    CHECK(r.exit_code == 0);
    CHECK(contains(r.err, "duplicate key value"));
    CHECK(contains(r.out, "ids=1,2"));
    CHECK(contains(r.out, "second-of-two"));
    CHECK(contains(r.out, "id|integer"));          // \d output, unaligned
    CHECK(contains(r.out, table + "|table|app"));  // \dt output
    CHECK(contains(r.out, "app|app|UTF8"));        // \l output
    CHECK(contains(r.err, "NOTICE:  notice-from-server 7"));
    CHECK(contains(r.out, "db=app"));
  }

  TEST_CASE("psql -c with a connection URI and PG* environment variables") {
    Target t(shared_cluster());
    std::string uri = "postgresql://app:secret@127.0.0.1:" + std::to_string(t.port()) + "/" + t.dbname() +
                      "?sslmode=disable";
    CommandResult a = run_command({psql(), "-X", "-At", uri, "-c", "SELECT 'via-uri'"}, "", 60s);
    INFO("uri: " << a.describe());
    CHECK(a.exit_code == 0);
    CHECK(contains(a.out, "via-uri"));

    CommandOptions env;
    env.env = {{"PGHOST", "127.0.0.1"},  {"PGPORT", std::to_string(t.port())}, {"PGUSER", "app"},
               {"PGPASSWORD", "secret"}, {"PGDATABASE", t.dbname()},           {"PGSSLMODE", "disable"}};
    CommandResult b = run_command({psql(), "-X", "-At", "-c", "SELECT 'via-env'"}, "", 60s, env);
    INFO("env: " << b.describe());
    INFO("proxy log:\n" << t.log_tail());
    CHECK(b.exit_code == 0);
    CHECK(contains(b.out, "via-env"));
  }

}  // TEST_SUITE
