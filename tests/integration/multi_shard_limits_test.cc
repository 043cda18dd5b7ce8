// The configured max_message_size holds for a server's message on every multi-shard path, as on
// one shard's (docs/architecture.md §4.1, §5.6): a server message over it is a protocol violation
// (08P01 naming the limit), never relayed to the client, and a write or COPY it breaks is rolled
// back on every shard. The deployment allows 1 MB; each statement makes a shard send 2 MB in one
// message: a DataRow (reads, RETURNING), a CopyData (COPY ... TO STDOUT) or a NoticeResponse (a
// trigger's, during a COPY FROM STDIN).
#include "it_test.h"

#include "harness/sharded_fixture.h"

using namespace it;

namespace {

const char* const kBig = "repeat('x', 2000000)";  // one 2 MB text value, over the 1 MB limit

ShardedOptions limited() {
  ShardedOptions o;
  o.reference_tables = "[plans]";
  o.proxy.extra_yaml = "max_message_size: 1MB\n";
  return o;
}

struct Deployment {
  ShardedFixture f{limited()};
  std::vector<int64_t> keys;  // one key on every shard
  Deployment() {
    PgConn c = f.client();
    for (int s = 0; s < kShards; ++s) keys.push_back(tenant_on(s, kShards, 100 + 100 * s));
    for (int64_t key : keys) {
      PgResult r =
          c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(key) + ", 'small')");
      if (!r.ok()) throw std::runtime_error("seed orders: " + r.describe() + "\n" + f.log_tail());
    }
    PgResult r = c.exec("CREATE TABLE plans (id int PRIMARY KEY, name text NOT NULL)");
    if (!r.ok()) throw std::runtime_error("CREATE TABLE plans: " + r.describe() + "\n" + f.log_tail());
  }
  std::string key_list() const {
    std::string out;
    for (int64_t key : keys) out += (out.empty() ? "" : ", ") + std::to_string(key);
    return out;
  }
  long long count_on_every_shard(const std::string& sql) const {
    long long n = 0;
    for (int s = 0; s < kShards; ++s) n += std::stoll(f.setup.shard(s).value(sql));
    return n;
  }
};

// The statement failed with the limit's 08P01, and no row of it reached the client.
void check_refused(const PgResult& r, const std::string& what) {
  INFO(what << " -> " << r.describe());
  CHECK(!r.ok());
  CHECK(r.sqlstate() == "08P01");
  CHECK(contains(r.error(), "limit 1048576"));
  for (const auto& row : r.data())
    for (const auto& value : row) CHECK(value.size() < 1000000);
}

// Runs a COPY FROM STDIN with `data` in one CopyData; the COPY's result.
PgResult copy_in(PgConn& conn, const std::string& sql, const std::string& data) {
  PGresult* started = PQexec(conn.get(), sql.c_str());
  if (PQresultStatus(started) != PGRES_COPY_IN) {
    PgResult failed(started);
    while (PGresult* more = PQgetResult(conn.get())) PQclear(more);
    return failed;
  }
  PQclear(started);
  PQputCopyData(conn.get(), data.data(), static_cast<int>(data.size()));
  PQputCopyEnd(conn.get(), nullptr);
  PgResult out = PgResult::failure("no result after CopyDone");
  while (PGresult* result = PQgetResult(conn.get())) out = PgResult(result);
  return out;
}

// COPY ... TO STDOUT: the CopyData rows, or the error that ended it.
PgResult copy_out(PgConn& conn, const std::string& sql, std::string* data) {
  PGresult* started = PQexec(conn.get(), sql.c_str());
  if (PQresultStatus(started) != PGRES_COPY_OUT) return PgResult(started);
  PQclear(started);
  char* line = nullptr;
  int n = 0;
  while ((n = PQgetCopyData(conn.get(), &line, 0)) > 0) {
    data->append(line, static_cast<size_t>(n));
    PQfreemem(line);
  }
  PgResult out = PgResult::failure("no result after the copy");
  while (PGresult* result = PQgetResult(conn.get())) out = PgResult(result);
  return out;
}

}  // namespace

TEST_SUITE("multi_shard_limits") {
  TEST_CASE("a server message over max_message_size fails every multi-shard read") {
    PROXY_ONLY();
    Deployment d;
    {  // one shard: the reference behaviour
      PgConn c = d.f.client();
      check_refused(c.exec(std::string("SELECT ") + kBig +
                           " FROM orders WHERE tenant_id = " + std::to_string(d.keys[0])),
                    "one shard");
    }
    {  // rows concatenated (Fanout)
      PgConn c = d.f.client();
      check_refused(c.exec(std::string("SELECT ") + kBig + " FROM orders"), "scatter read");
    }
    {  // rows merged (MergeFanout)
      PgConn c = d.f.client();
      check_refused(c.exec(std::string("SELECT tenant_id, ") + kBig + " FROM orders ORDER BY tenant_id"),
                    "merged read");
    }
    {  // copies joined (Fanout, COPY ... TO STDOUT)
      PgConn c = d.f.client();
      std::string data;
      check_refused(copy_out(c, std::string("COPY (SELECT ") + kBig + " FROM orders) TO STDOUT", &data),
                    "COPY TO STDOUT");
      CHECK(data.size() < 1000000);
    }
    PgConn after = d.f.client();  // the proxy serves on
    CHECK(after.value("SELECT count(*) FROM orders") == "3");
  }

  TEST_CASE("a server message over max_message_size fails a multi-shard write and COPY, rolled back") {
    PROXY_ONLY();
    Deployment d;
    {  // a reference write's RETURNING (ReferenceWrite)
      PgConn c = d.f.client();
      check_refused(c.exec(std::string("INSERT INTO plans VALUES (1, ") + kBig + ") RETURNING name"),
                    "reference write");
      CHECK(d.count_on_every_shard("SELECT count(*) FROM plans") == 0);
    }
    {  // a split INSERT's RETURNING (SplitInsert)
      PgConn c = d.f.client();
      std::string values;
      for (int64_t key : d.keys)
        values += (values.empty() ? "(" : ", (") + std::to_string(key) + ", " + kBig + ")";
      check_refused(c.exec("INSERT INTO orders (tenant_id, note) VALUES " + values + " RETURNING note"),
                    "split insert");
      CHECK(d.count_on_every_shard("SELECT count(*) FROM orders WHERE note <> 'small'") == 0);
    }
    {  // a COPY FROM STDIN whose shards answer with a 2 MB notice (CopyIn)
      for (int s = 0; s < kShards; ++s) {
        PgConn shard = d.f.setup.shard(s);
        REQUIRE_OK(
            shard.exec(std::string("CREATE FUNCTION loud() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                                   "IF NEW.note = 'loud' THEN RAISE NOTICE '%', ") +
                       kBig + "; END IF; RETURN NEW; END $$"));
        REQUIRE_OK(
            shard.exec("CREATE TRIGGER loud BEFORE INSERT ON orders FOR EACH ROW EXECUTE FUNCTION loud()"));
      }
      PgConn c = d.f.client();
      std::string data;
      for (int64_t key : d.keys) data += std::to_string(key) + "\tloud\n";
      check_refused(copy_in(c, "COPY orders (tenant_id, note) FROM STDIN", data), "COPY FROM STDIN");
      CHECK(d.count_on_every_shard("SELECT count(*) FROM orders WHERE note = 'loud'") == 0);
    }
    PgConn after = d.f.client();  // the proxy serves on
    CHECK(after.value("SELECT count(*) FROM orders") == "3");
  }
}

TEST_SUITE("multi_shard_limits") {
  // The same paths on the servers of the client's transaction (lent to the run and taken back).
  TEST_CASE("a server message over max_message_size fails multi-shard work inside a transaction") {
    PROXY_ONLY();
    Deployment d;
    {  // rows merged on the transaction's legs (MergeFanout)
      PgConn c = d.f.client();
      REQUIRE_OK(c.exec("BEGIN"));
      check_refused(c.exec(std::string("SELECT tenant_id, ") + kBig + " FROM orders ORDER BY tenant_id"),
                    "merged read in a transaction");
    }
    {  // a split INSERT's RETURNING in a transaction (SplitInsert)
      PgConn c = d.f.client();
      REQUIRE_OK(c.exec("BEGIN"));
      std::string values;
      for (int64_t key : d.keys)
        values += (values.empty() ? "(" : ", (") + std::to_string(key) + ", " + kBig + ")";
      check_refused(c.exec("INSERT INTO orders (tenant_id, note) VALUES " + values + " RETURNING note"),
                    "split insert in a transaction");
    }
    {  // a COPY FROM STDIN in a transaction whose shards answer with a 2 MB notice (CopyIn)
      for (int s = 0; s < kShards; ++s) {
        PgConn shard = d.f.setup.shard(s);
        REQUIRE_OK(
            shard.exec(std::string("CREATE FUNCTION loud() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                                   "IF NEW.note = 'loud' THEN RAISE NOTICE '%', ") +
                       kBig + "; END IF; RETURN NEW; END $$"));
        REQUIRE_OK(
            shard.exec("CREATE TRIGGER loud BEFORE INSERT ON orders FOR EACH ROW EXECUTE FUNCTION loud()"));
      }
      PgConn c = d.f.client();
      REQUIRE_OK(c.exec("BEGIN"));
      std::string data;
      for (int64_t key : d.keys) data += std::to_string(key) + "\tloud\n";
      check_refused(copy_in(c, "COPY orders (tenant_id, note) FROM STDIN", data),
                    "COPY FROM STDIN in a transaction");
    }
    CHECK(d.count_on_every_shard("SELECT count(*) FROM orders WHERE note <> 'small'") == 0);
    PgConn after = d.f.client();  // the proxy serves on
    CHECK(after.value("SELECT count(*) FROM orders") == "3");
  }
}
