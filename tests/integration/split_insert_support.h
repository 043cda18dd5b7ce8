// Helpers of the split INSERT suites (split_insert, split_insert_transactions): keys, rows on the
// shards checked directly, what shardwire left prepared, and libpq pipelines of one-row INSERTs.
#pragma once

#include <libpq-fe.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "harness/sharded_fixture.h"
#include "it_test.h"

namespace it::split {

inline std::string k(int64_t key) { return std::to_string(key); }

// A row of orders (tenant, id, note 'there') written on shard `shard` directly, past shardwire:
// an INSERT of the same (tenant, id) then violates the primary key there alone.
inline void insert_directly(const ShardedFixture& f, int shard, int64_t tenant, int id) {
  PgConn conn = f.setup.shard(shard);
  REQUIRE_OK(conn.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(tenant) + ", " +
                       std::to_string(id) + ", 'there')"));
}

inline long long rows_everywhere(const ShardedFixture& f) {
  long long total = 0;
  for (int s = 0; s < kShards; ++s) total += static_cast<long long>(f.rows_on(s).size());
  return total;
}

inline long long shardwire_prepared(const ShardedFixture& f) {
  long long n = 0;
  for (int i = 0; i < kShards; ++i) {
    PgConn c = f.setup.shard(i);
    n +=
        std::stoll(c.value("SELECT count(*) FROM pg_prepared_xacts WHERE gid LIKE 'shardwire\\_%' "
                           "AND database = current_database()"));
  }
  return n;
}

// The first two columns ("id|note") of each returned row, in the order the client got them.
inline std::vector<std::string> returned(const PgResult& r) {
  std::vector<std::string> out;
  for (const auto& row : r.data()) out.push_back(row.at(0) + "|" + row.at(1));
  return out;
}

struct Tenants {
  int64_t a = tenant_on(0, kShards);
  int64_t b = tenant_on(1, kShards);
  int64_t c = tenant_on(2, kShards);
  int64_t a2 = tenant_on(0, kShards, a + 1);
  int64_t b2() const { return tenant_on(1, kShards, b + 1); }
};

// A pipeline unit: one row, its tenant and note.
using Unit = std::pair<int64_t, std::string>;

// Sends `unit` as an extended-protocol INSERT RETURNING its note; its id is `id`, or 7 for
// `fixed` (a tenant whose id 7 a later batch repeats: 23505).
inline void send_unit(PGconn* p, const Unit& unit, const std::string& id, int64_t fixed) {
  const std::string tenant = k(unit.first);
  const char* values[3] = {tenant.c_str(), unit.second.c_str(), unit.first == fixed ? "7" : id.c_str()};
  REQUIRE(PQsendQueryParams(p, "INSERT INTO orders (tenant_id, id, note) VALUES ($1, $3, $2) RETURNING note",
                            3, nullptr, values, nullptr, nullptr, 0) == 1);
}

// A pipeline's result as a line: its status, ":<note>" for its one row, ":<SQLSTATE>" for an error.
inline std::string line_of(const PGresult* r) {
  const ExecStatusType status = PQresultStatus(r);
  std::string line = PQresStatus(status);
  if (status == PGRES_TUPLES_OK && PQntuples(r) == 1) line += std::string(":") + PQgetvalue(r, 0, 0);
  if (status == PGRES_FATAL_ERROR) {
    const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    line += std::string(":") + (state ? state : "");
  }
  return line + "\n";
}

// The pipeline's next result as a line; the null that ends its sequence is checked.
inline std::string next_result(PGconn* p) {
  PGresult* r = PQgetResult(p);
  REQUIRE(r != nullptr);
  std::string line = line_of(r);
  PQclear(r);
  CHECK(PQgetResult(p) == nullptr);
  return line;
}

// After PQpipelineSync: the lines of the results still due before the Sync's; then the pipeline
// is left, and the session must be outside any transaction.
inline std::string results_to_sync(PGconn* p) {
  std::string got;
  for (;;) {
    PGresult* r = PQgetResult(p);
    REQUIRE(r != nullptr);
    const bool sync = PQresultStatus(r) == PGRES_PIPELINE_SYNC;
    if (!sync) got += line_of(r);
    PQclear(r);
    if (sync) break;
    CHECK(PQgetResult(p) == nullptr);
  }
  REQUIRE(PQexitPipelineMode(p) == 1);
  CHECK(PQtransactionStatus(p) == PQTRANS_IDLE);
  return got;
}

// How a pipeline's answers are read: all after its one Sync, or each unit's at a flush request
// sent after it (as psycopg's pipeline executemany reads), the skipped ones' after the Sync.
enum class ReadAnswers { AtSync, AtEachFlush };

// Runs `units` (ids as send_unit gives them) as one libpq pipeline ending in one Sync; returns the
// result lines in the client's order. AtSync flushes the first unit alone, so it reaches the proxy
// before the rest of its batch. After an error the server skips the rest (PIPELINE_ABORTED).
inline std::string run_pipeline(PGconn* p, const std::vector<Unit>& units, const std::string& id,
                                int64_t fixed, ReadAnswers read) {
  REQUIRE(PQenterPipelineMode(p) == 1);
  std::string got;
  for (const Unit& unit : units) {
    send_unit(p, unit, id, fixed);
    if (read == ReadAnswers::AtSync) {
      if (&unit != &units.front()) continue;
      REQUIRE(PQflush(p) == 0);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    REQUIRE(PQsendFlushRequest(p) == 1);
    REQUIRE(PQflush(p) == 0);
    if (got.find("PGRES_FATAL_ERROR") == std::string::npos) got += next_result(p);
  }
  REQUIRE(PQpipelineSync(p) == 1);
  return got + results_to_sync(p);
}

// A libpq pipeline case of the split_insert suite: 3 shards, a client, and how it reads its
// pipelines' answers. Tenant a's unit always has id 7, so a batch repeating it fails on s0 (23505).
struct PipelineCase {
  explicit PipelineCase(ReadAnswers answers) : read(answers) {}

  std::string run(const std::vector<Unit>& units, const std::string& id) {
    return run_pipeline(c.get(), units, id, t.a, read);
  }

  // The first batch, over 3 shards: its 4 results in order, each row committed on its owner,
  // nothing left prepared.
  void commit_first_batch() {
    CHECK(run({{t.b, "b"}, {t.a, "a"}, {t.c, "c"}, {t.b2(), "b2"}}, "7") ==
          "PGRES_TUPLES_OK:b\nPGRES_TUPLES_OK:a\nPGRES_TUPLES_OK:c\nPGRES_TUPLES_OK:b2\n");
    CHECK(f.rows_on(0) == std::vector<std::string>{row_of(t.a, "a")});
    std::vector<std::string> on_b = {row_of(t.b, "b"), row_of(t.b2(), "b2")};
    std::sort(on_b.begin(), on_b.end());
    CHECK(f.rows_on(1) == on_b);
    CHECK(f.rows_on(2) == std::vector<std::string>{row_of(t.c, "c")});
    CHECK(shardwire_prepared(f) == 0);
  }

  // A failed batch left nothing: no row matching `written` on any shard, nothing prepared, no
  // server idle in a transaction.
  void check_nothing_left(const std::string& written) const {
    for (int s = 0; s < kShards; ++s) CHECK(f.rows_on(s, written).empty());
    CHECK(shardwire_prepared(f) == 0);
    for (int s = 0; s < kShards; ++s) CHECK(f.idle_in_transaction(s) == 0);
  }

  ShardedFixture f;
  const Tenants t;
  PgConn c = f.client();
  const ReadAnswers read;
};

}  // namespace it::split
