// COPY sharded_table FROM STDIN through shardwire on 3 real shards: the client's rows split by
// key, each on its owner exactly once (checked on every shard directly, against the router's
// hash and shardwire.bucket_of there), `COPY n` with the total; text (escapes in the key), CSV
// (HEADER, QUOTE, ESCAPE, NULL, quoted keys, fields spanning lines) through psql's \copy and
// libpq, binary written by a real PostgreSQL's COPY TO, all fed in CopyData pieces that cut rows
// anywhere; a bad key, a NULL key, a row a shard refuses, CopyFail: nothing written anywhere.
// Rows for several shards commit together by two-phase commit (a million rows over 3 shards, in
// text and in binary; a bad row at row 500 000 of a million, or a duplicate on one shard, rolls
// every shard back); under cross_shard_transactions: refuse such a
// COPY is refused at its end and nothing is written.
#include "it_test.h"

#include <chrono>
#include <map>

#include "harness/sharded_fixture.h"

using namespace it;

namespace {

struct CopyOutcome {
  bool ok = false;
  std::string tag;
  std::string sqlstate;
  std::string message;
};

// Runs `sql` (a COPY FROM STDIN) and sends `data` in CopyData pieces of `piece` bytes, then
// CopyDone (or CopyFail with `fail_message`).
CopyOutcome copy_in(PgConn& conn, const std::string& sql, const std::string& data, size_t piece,
                    const char* fail_message = nullptr) {
  CopyOutcome out;
  PGresult* started = PQexec(conn.get(), sql.c_str());
  if (PQresultStatus(started) != PGRES_COPY_IN) {
    const char* state = PQresultErrorField(started, PG_DIAG_SQLSTATE);
    out.sqlstate = state ? state : "";
    out.message = PQresultErrorMessage(started);
    PQclear(started);
    while (PGresult* more = PQgetResult(conn.get())) PQclear(more);
    return out;
  }
  PQclear(started);
  for (size_t at = 0; at < data.size(); at += piece) {
    const size_t n = std::min(piece, data.size() - at);
    if (PQputCopyData(conn.get(), data.data() + at, static_cast<int>(n)) != 1) break;
  }
  PQputCopyEnd(conn.get(), fail_message);
  while (PGresult* result = PQgetResult(conn.get())) {
    if (PQresultStatus(result) == PGRES_COMMAND_OK) {
      out.ok = true;
      out.tag = PQcmdStatus(result);
    } else {
      const char* state = PQresultErrorField(result, PG_DIAG_SQLSTATE);
      out.sqlstate = state ? state : "";
      out.message = PQresultErrorMessage(result);
    }
    PQclear(result);
  }
  return out;
}

// Keys whose buckets are all on shard `shard`.
std::vector<int64_t> keys_on(int shard, size_t n, uint64_t seed) {
  std::vector<int64_t> keys;
  for (int64_t k : spread_keys(n * 6, seed, true)) {
    if (shard_of_key(k) == shard && keys.size() < n) keys.push_back(k);
  }
  return keys;
}

// Rows "key|note" per shard, sorted, as the router places them.
std::map<int, std::vector<std::string>> expected_by_shard(
    const std::vector<std::pair<int64_t, std::string>>& rows) {
  std::map<int, std::vector<std::string>> out;
  for (int s = 0; s < kShards; ++s) out[s];
  for (const auto& [key, note] : rows) out[shard_of_key(key)].push_back(row_of(key, note));
  for (auto& [shard, list] : out) std::sort(list.begin(), list.end());
  return out;
}

// Every row on its owner exactly once, none elsewhere (by the router's hash and bucket_of there).
void check_placement(const ShardedFixture& f, const std::string& where,
                     const std::vector<std::pair<int64_t, std::string>>& rows) {
  auto expected = expected_by_shard(rows);
  for (int s = 0; s < kShards; ++s) {
    INFO("shard " << s);
    CHECK(f.rows_on(s, where) == expected[s]);
    CHECK(f.misplaced_on(s) == 0);
  }
}

long long rows_anywhere(const ShardedFixture& f, const std::string& where) {
  long long total = 0;
  for (int s = 0; s < kShards; ++s) {
    PgConn c = f.setup.shard(s);
    total += std::stoll(c.value("SELECT count(*) FROM orders WHERE " + where));
  }
  return total;
}

// COPY BINARY rows (tenant_id int8, note text, qty int4) for keys 1..rows; the row numbered
// `null_key_row` (1-based; 0 for none) has a NULL key.
std::string binary_copy(int64_t rows, const std::string& note, int64_t null_key_row) {
  std::string out("PGCOPY\n\377\r\n\0", 11);
  auto put = [&out](uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i) out += static_cast<char>((v >> (8 * i)) & 0xff);
  };
  put(0, 4);  // flags
  put(0, 4);  // header extension length
  out.reserve(static_cast<size_t>(rows) * (2 + 12 + 4 + note.size() + 8) + 32);
  for (int64_t k = 1; k <= rows; ++k) {
    put(3, 2);
    if (k == null_key_row) {
      put(0xffffffff, 4);
    } else {
      put(8, 4);
      put(static_cast<uint64_t>(k), 8);
    }
    put(note.size(), 4);
    out += note;
    put(4, 4);
    put(static_cast<uint64_t>(k % 1000), 4);
  }
  put(0xffff, 2);  // the trailer
  return out;
}

// Keys 1..rows copied with `note`: each shard holds exactly the keys it owns, once each, none
// misplaced, nothing left prepared.
void check_bulk_placement(const ShardedFixture& f, const std::string& note, int64_t rows) {
  int64_t expected[kShards] = {0, 0, 0};
  for (int64_t k = 1; k <= rows; ++k) ++expected[shard_of_key(k)];
  const std::string where = " FROM orders WHERE note = '" + note + "'";
  for (int s = 0; s < kShards; ++s) {
    INFO("shard " << s);
    PgConn direct = f.setup.shard(s);
    CHECK(direct.value("SELECT count(*)" + where) == std::to_string(expected[s]));
    CHECK(direct.value("SELECT count(DISTINCT tenant_id)" + where) == std::to_string(expected[s]));
    CHECK(f.misplaced_on(s) == 0);
    CHECK(direct.value("SELECT count(*) FROM pg_prepared_xacts") == "0");
  }
  CHECK(rows_anywhere(f, "note = '" + note + "'") == rows);
}

// Deletes rows on every shard directly (a keyless DELETE through shardwire is refused).
void delete_everywhere(const ShardedFixture& f, const std::string& where) {
  for (int s = 0; s < kShards; ++s) {
    PgConn c = f.setup.shard(s);
    REQUIRE_OK(c.exec("DELETE FROM orders WHERE " + where));
  }
}

}  // namespace

TEST_SUITE("copy_in") {
  TEST_CASE("text COPY into one shard's keys: rows cut anywhere, with and without a column list") {
    PROXY_ONLY();
    ShardedFixture f;
    PgConn c = f.client();
    for (int shard = 0; shard < kShards; ++shard) {
      INFO("shard " << shard);
      const std::vector<int64_t> keys = keys_on(shard, 400, 11 + static_cast<uint64_t>(shard));
      std::vector<std::pair<int64_t, std::string>> rows;
      std::string listed, whole_table;
      for (size_t i = 0; i < keys.size(); ++i) {
        std::string stem(1, 't');
        stem += std::to_string(shard);
        stem += '-';
        stem += std::to_string(i);
        const std::string note = i % 5 ? stem : stem + "\\ttab";
        rows.emplace_back(keys[i], i % 5 ? note : stem + "\ttab");
        // Every 7th key written with escapes (\x2d is '-', \061 is '1'): the key is de-escaped first.
        std::string key = std::to_string(keys[i]);
        if (i % 7 == 3 && key[0] == '-') key = "\\x2d" + key.substr(1);
        if (i % 7 == 4 && key[0] == '1') key = "\\061" + key.substr(1);
        if (i % 2 == 0) {
          listed += note + "\t" + key + "\n";
        } else {
          whole_table +=
              std::to_string(100000 + i) + "\t" + key + "\t" + note + "\t" + std::to_string(i) + "\n";
        }
      }
      for (size_t piece : {size_t{1}, size_t{7}, size_t{65536}}) {
        INFO("piece " << piece);
        delete_everywhere(f, "true");
        CopyOutcome a = copy_in(c, "COPY orders (note, tenant_id) FROM STDIN", listed, piece);
        REQUIRE_MESSAGE(a.ok, a.sqlstate << " " << a.message << "\n" << f.log_tail(10));
        CHECK(a.tag == "COPY " + std::to_string((keys.size() + 1) / 2));
        CopyOutcome b = copy_in(c, "COPY orders FROM STDIN", whole_table + "\\.\n", piece);
        REQUIRE_MESSAGE(b.ok, b.sqlstate << " " << b.message);
        CHECK(b.tag == "COPY " + std::to_string(keys.size() / 2));
        check_placement(f, "true", rows);
        CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
      }
    }
  }

  TEST_CASE("psql \\copy, CSV with HEADER, QUOTE, ESCAPE and NULL; binary from a real COPY TO") {
    PROXY_ONLY();
    ShardedFixture f;
    TempDir tmp;
    const std::vector<int64_t> keys = keys_on(1, 300, 5);
    std::vector<std::pair<int64_t, std::string>> rows;
    std::string csv = "note;tenant_id\n";
    for (size_t i = 0; i < keys.size(); ++i) {
      std::string note = "c" + std::to_string(i);
      std::string field = note;
      if (i % 4 == 1) {
        note += ";it's \"x\"\nline";
        field = "'" + std::string("c") + std::to_string(i) + ";it\\'s \"x\"\nline'";
      }
      const std::string key = i % 3 == 0 ? "'" + std::to_string(keys[i]) + "'" : std::to_string(keys[i]);
      if (i % 10 == 9) {
        csv += "nil;" + key + "\n";  // NULL note
        rows.emplace_back(keys[i], "");
      } else {
        csv += field + ";" + key + "\n";
        rows.emplace_back(keys[i], note);
      }
    }
    write_file(tmp.file("in.csv"), csv);
    const std::string script =
        "\\set ON_ERROR_STOP 1\n\\copy orders (note, tenant_id) FROM '" + tmp.file("in.csv") +
        "' WITH (FORMAT csv, HEADER match, DELIMITER ';', QUOTE '''', ESCAPE '\\', NULL "
        "'nil')\n";
    CommandResult r =
        run_command({psql(), "-X", "-q", "-d", f.proxy->conninfo()}, script, std::chrono::seconds(60));
    INFO("psql: " << r.describe() << "\nproxy log:\n" << f.log_tail(20));
    REQUIRE(r.exit_code == 0);
    check_placement(f, "note IS NULL OR note LIKE 'c%'", rows);
    CHECK(rows_anywhere(f, "note IS NULL") == 30);

    // Binary: the bytes a real PostgreSQL writes (shard 2's server, a query of constants).
    std::string ids;
    const std::vector<int64_t> binary_keys = keys_on(2, 200, 9);
    for (int64_t k : binary_keys) ids += (ids.empty() ? "" : ",") + std::to_string(k);
    PgConn direct = f.setup.shard(2);
    std::string binary;
    {
      PGresult* started =
          PQexec(direct.get(), ("COPY (SELECT 'b' || k AS note, k::bigint AS tenant_id FROM unnest(ARRAY[" +
                                ids + "]::bigint[]) k) TO STDOUT (FORMAT binary)")
                                   .c_str());
      REQUIRE(PQresultStatus(started) == PGRES_COPY_OUT);
      PQclear(started);
      char* buffer = nullptr;
      int n = 0;
      while ((n = PQgetCopyData(direct.get(), &buffer, 0)) > 0) {
        binary.append(buffer, static_cast<size_t>(n));
        PQfreemem(buffer);
      }
      while (PGresult* done = PQgetResult(direct.get())) PQclear(done);
    }
    std::vector<std::pair<int64_t, std::string>> binary_rows;
    for (int64_t k : binary_keys) binary_rows.emplace_back(k, "b" + std::to_string(k));
    PgConn c = f.client();
    for (size_t piece : {size_t{3}, size_t{1000}}) {
      delete_everywhere(f, "note LIKE 'b%'");
      CopyOutcome b = copy_in(c, "COPY orders (note, tenant_id) FROM STDIN (FORMAT binary)", binary, piece);
      REQUIRE_MESSAGE(b.ok, b.sqlstate << " " << b.message << "\n" << f.log_tail(10));
      CHECK(b.tag == "COPY 200");
      check_placement(f, "note LIKE 'b%'", binary_rows);
    }
  }

  TEST_CASE("a bad key, a NULL key, a row a shard refuses, CopyFail: the client's error, nothing written") {
    PROXY_ONLY();
    ShardedFixture f;
    PgConn c = f.client();
    const std::vector<int64_t> keys = keys_on(0, 600, 21);
    auto data_with = [&](size_t bad_line, const std::string& bad_row) {
      std::string data;
      for (size_t i = 0; i < keys.size(); ++i) {
        data +=
            i + 1 == bad_line ? bad_row : std::to_string(keys[i]) + "\tbad-" + std::to_string(i) + "\t1\n";
      }
      return data;
    };
    struct Case {
      std::string row;
      std::string sqlstate;
      std::string context;
    };
    const std::string key = std::to_string(keys[299]);
    const std::vector<Case> cases = {
        {"12x\tbad-key\t1\n", "22P02", "line 300"},
        {"\\N\tnull-key\t1\n", "23502", "line 300"},
        {"99999999999999999999\tbig\t1\n", "22003", "line 300"},
        {"12\\.\n", "22P04", "line 300"},
        {key + "\tno-qty\n", "22P04", ""},                 // the shard's own error: missing data for qty
        {key + "\tbad-qty\tnot a number\n", "22P02", ""},  // the shard's own error
    };
    for (const Case& test : cases) {
      INFO(test.row);
      CopyOutcome out =
          copy_in(c, "COPY orders (tenant_id, note, qty) FROM STDIN", data_with(300, test.row), 4096);
      CHECK_FALSE(out.ok);
      CHECK(out.sqlstate == test.sqlstate);
      if (!test.context.empty()) CHECK(out.message.find("COPY orders, " + test.context) != std::string::npos);
      CHECK(rows_anywhere(f, "note LIKE 'bad-%'") == 0);
      CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
    }
    CopyOutcome failed = copy_in(c, "COPY orders (tenant_id, note, qty) FROM STDIN", data_with(0, ""), 100,
                                 "the client gave up");
    CHECK(failed.sqlstate == "57014");
    CHECK(failed.message.find("the client gave up") != std::string::npos);
    CHECK(rows_anywhere(f, "note LIKE 'bad-%'") == 0);
    // The session goes on: a good COPY and a query after the failures.
    CopyOutcome good = copy_in(c, "COPY orders (tenant_id, note, qty) FROM STDIN", data_with(0, ""), 100);
    REQUIRE_MESSAGE(good.ok, good.message);
    CHECK(good.tag == "COPY 600");
    CHECK(c.value("SELECT count(*) FROM orders WHERE tenant_id = " + std::to_string(keys[5])) == "1");
    // Refused before any row: no key in the column list, from a file. Inside a transaction it
    // joins it (every_shard_write_test.cc): an empty one copies nothing, the transaction goes on.
    CHECK(copy_in(c, "COPY orders (note) FROM STDIN", "", 1).sqlstate == "0A000");
    REQUIRE_OK(c.exec("BEGIN"));
    CopyOutcome in_transaction = copy_in(c, "COPY orders (tenant_id, note) FROM STDIN", "", 1);
    CHECK(in_transaction.ok);
    CHECK(in_transaction.tag == "COPY 0");
    CHECK(PQtransactionStatus(c.get()) == PQTRANS_INTRANS);
    REQUIRE_OK(c.exec("ROLLBACK"));
    CHECK(copy_in(c, "COPY orders FROM '/tmp/x'", "", 1).sqlstate == "0A000");
    CHECK(copy_in(c, "COPY no_such_table FROM STDIN", "", 1).sqlstate == "42P01");
  }

  TEST_CASE("1 000 000 rows into 3 shards in 64 KiB CopyData pieces: two-phase commit, every row once") {
    PROXY_ONLY();
    ShardedFixture f;
    PgConn c = f.client();
    const int64_t rows = 1000000;
    std::string data;
    data.reserve(static_cast<size_t>(rows) * 24);
    for (int64_t k = 1; k <= rows; ++k)
      data += std::to_string(k) + "\tbulk\t" + std::to_string(k % 1000) + "\n";
    const auto started = std::chrono::steady_clock::now();
    CopyOutcome out = copy_in(c, "COPY orders (tenant_id, note, qty) FROM STDIN", data, 65536);
    const auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    REQUIRE_MESSAGE(out.ok, out.sqlstate << " " << out.message << "\n" << f.log_tail(10));
    CHECK(out.tag == "COPY 1000000");
    MESSAGE("1 000 000 rows into 3 shards through shardwire in " << took << " s");
    check_bulk_placement(f, "bulk", rows);
  }

  TEST_CASE("a million rows with a bad row at row 500 000, text and binary: no row anywhere") {
    PROXY_ONLY();
    ShardedFixture f;
    PgConn c = f.client();
    const int64_t rows = 1000000;
    const int64_t bad = 500000;
    std::string text;
    text.reserve(static_cast<size_t>(rows) * 24);
    for (int64_t k = 1; k <= rows; ++k)
      text +=
          (k == bad ? std::string("12x") : std::to_string(k)) + "\tlate\t" + std::to_string(k % 1000) + "\n";
    struct Case {
      std::string what;
      std::string sql;
      std::string data;
      std::string sqlstate;
    };
    const std::vector<Case> cases = {
        {"text, a malformed key", "COPY orders (tenant_id, note, qty) FROM STDIN", text, "22P02"},
        {"binary, a NULL key", "COPY orders (tenant_id, note, qty) FROM STDIN (FORMAT binary)",
         binary_copy(rows, "late", bad), "23502"},
    };
    for (const Case& test : cases) {
      INFO(test.what);
      CopyOutcome out = copy_in(c, test.sql, test.data, 65536);
      CHECK_FALSE(out.ok);
      CHECK(out.sqlstate == test.sqlstate);
      CHECK(out.message.find("COPY orders, line 500000") != std::string::npos);
      CHECK(rows_anywhere(f, "note = 'late'") == 0);
      for (int s = 0; s < kShards; ++s)
        CHECK(f.setup.shard(s).value("SELECT count(*) FROM pg_prepared_xacts") == "0");
      CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
    }
    // The same million in binary without the bad row: every row on its owner once.
    CopyOutcome good = copy_in(c, "COPY orders (tenant_id, note, qty) FROM STDIN (FORMAT binary)",
                               binary_copy(rows, "late", 0), 65536);
    REQUIRE_MESSAGE(good.ok, good.sqlstate << " " << good.message << "\n" << f.log_tail(10));
    CHECK(good.tag == "COPY 1000000");
    check_bulk_placement(f, "late", rows);
  }

  TEST_CASE(
      "rows for several shards: committed together by two-phase commit; a failure on one shard rolls back "
      "all") {
    PROXY_ONLY();
    ShardedFixture f;
    PgConn c = f.client();
    std::vector<std::pair<int64_t, std::string>> rows;
    std::string data;
    for (int64_t k : spread_keys(3000, 3, true)) {
      data += std::to_string(k) + "\tmulti\n";
      rows.emplace_back(k, "multi");
    }
    for (size_t piece : {size_t{5}, size_t{8192}}) {
      INFO("piece " << piece);
      delete_everywhere(f, "note = 'multi'");
      CopyOutcome out = copy_in(c, "COPY orders (tenant_id, note) FROM STDIN", data, piece);
      REQUIRE_MESSAGE(out.ok, out.sqlstate << " " << out.message << "\n" << f.log_tail(10));
      CHECK(out.tag == "COPY 3000");
      check_placement(f, "note = 'multi'", rows);
      CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
    }
    // A row shard 2 refuses (duplicate key: the same id twice for one tenant) after rows for
    // every shard: no shard keeps any row, nothing stays prepared.
    const int64_t on_s2 = key_where([](uint32_t b) { return b % kShards == 2; });
    std::string failing;
    for (int64_t k = 1; k <= 300; ++k)
      failing += '9' + std::to_string(k) + '\t' + std::to_string(k) + "\tdup\n";
    failing += "1\t" + std::to_string(on_s2) + "\tdup\n1\t" + std::to_string(on_s2) + "\tdup\n";
    CopyOutcome dup = copy_in(c, "COPY orders (id, tenant_id, note) FROM STDIN", failing, 4096);
    CHECK_FALSE(dup.ok);
    CHECK(dup.sqlstate == "23505");
    CHECK(rows_anywhere(f, "note = 'dup'") == 0);
    for (int s = 0; s < kShards; ++s)
      CHECK(f.setup.shard(s).value("SELECT count(*) FROM pg_prepared_xacts") == "0");
  }

  TEST_CASE("a shard's error names the client's line, not the line within that shard's stream") {
    PROXY_ONLY();
    ShardedFixture f;
    PgConn c = f.client();
    // 30 000 rows over every shard; row 29 990 has a qty the shard refuses (22P02, its CONTEXT
    // "COPY orders, line N, column qty").
    std::string text, csv = "tenant_id,note,qty\n";
    for (int64_t k = 1; k <= 30000; ++k) {
      const std::string qty = k == 29990 ? "x" : std::to_string(k % 100);
      text += std::to_string(k) + "\tlines\t" + qty + "\n";
      csv += std::to_string(k) + ",lines," + qty + "\n";
    }
    CopyOutcome plain = copy_in(c, "COPY orders (tenant_id, note, qty) FROM STDIN", text, 65536);
    CHECK_FALSE(plain.ok);
    CHECK(plain.sqlstate == "22P02");
    CHECK_MESSAGE(plain.message.find("COPY orders, line 29990, column qty") != std::string::npos,
                  plain.message);
    CopyOutcome header =
        copy_in(c, "COPY orders (tenant_id, note, qty) FROM STDIN (FORMAT csv, HEADER true)", csv, 65536);
    CHECK_FALSE(header.ok);
    CHECK(header.sqlstate == "22P02");
    CHECK_MESSAGE(header.message.find("COPY orders, line 29991, column qty") != std::string::npos,
                  header.message);
    CHECK(rows_anywhere(f, "note = 'lines'") == 0);
    CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
  }

  TEST_CASE("under cross_shard_transactions: refuse, rows for several shards are refused at the end") {
    PROXY_ONLY();
    ShardedFixture f(refusing_cross_shard_transactions());
    PgConn c = f.client();
    std::string data;
    for (int64_t k : spread_keys(300, 4)) data += std::to_string(k) + "\trefused\n";
    CopyOutcome out = copy_in(c, "COPY orders (tenant_id, note) FROM STDIN", data, 1024);
    CHECK_FALSE(out.ok);
    CHECK(out.sqlstate == "0A000");
    CHECK(out.message.find("s0, s1, s2") != std::string::npos);
    CHECK(out.message.find("cross_shard_transactions") != std::string::npos);
    CHECK(rows_anywhere(f, "note = 'refused'") == 0);
    // One shard's rows still commit.
    std::string one;
    for (int64_t k : keys_on(1, 50, 8)) one += std::to_string(k) + "\tone\n";
    CopyOutcome single = copy_in(c, "COPY orders (tenant_id, note) FROM STDIN", one, 1024);
    REQUIRE_MESSAGE(single.ok, single.message);
    CHECK(single.tag == "COPY 50");
    CHECK(rows_anywhere(f, "note = 'one'") == 50);
  }
}
