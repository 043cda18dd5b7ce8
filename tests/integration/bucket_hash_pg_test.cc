// The C++ bucket hash (proxy/router/bucket_hash.h) against a real PostgreSQL 15 (docs/architecture.md §6.2).
// For more than 100 000 keys of each shard-key type (int2: all 65 536 values), every key is put
// into a `PARTITION BY HASH (k)` table with eight `MODULUS 8` partitions, and for every row:
//   * the C++ bucket with 8 buckets equals the REMAINDER of the partition PostgreSQL chose
//     (found through tableoid),
//   * the C++ bucket with 4096 (and 1000, 2^31-1) buckets equals shardwire.bucket_of(k, n) in SQL,
// computed from the text form the test sent (deliberately not always canonical: whitespace,
// signs, braces, upper case), from PostgreSQL's text output, and from its binary output.
// Keys travel by COPY and come back in one binary-format query, so the suite runs in seconds.
#include "it_test.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "router/bucket_hash.h"
#include "sqltext/bucket_sql.h"

using namespace it;
using sw::router::KeyType;

namespace {

// The bucket counts compared against SQL: the default, one that is not a power of two, the largest.
constexpr uint32_t kBucketCounts[] = {4096, 1000, 2147483647};

struct KeySet {
  std::string label;     // e.g. "int8"
  std::string sql_type;  // column type
  KeyType type;
  std::vector<std::optional<std::string>> keys;  // text forms sent; nullopt is a NULL key
};

// ---- key generation (deterministic) -----------------------------------------------------------

std::string int_variant(int64_t v, size_t i) {
  // Mostly canonical; some with what int*in also accepts, so the C++ parser sees those forms too.
  std::string s = std::to_string(v);
  switch (i % 16) {
    case 3: return " " + s + " ";
    case 7: return "\t" + s + "\n";
    case 11: return v >= 0 ? "+" + s : s;
    case 13: return v >= 0 ? "000" + s : "-000" + s.substr(1);
    default: return s;
  }
}

KeySet int2_keys() {
  KeySet ks{"int2", "smallint", KeyType::Int2, {}};
  for (int v = INT16_MIN; v <= INT16_MAX; ++v) ks.keys.push_back(int_variant(v, ks.keys.size()));
  ks.keys.push_back(std::nullopt);
  return ks;
}

KeySet int4_keys(std::mt19937_64& rng) {
  KeySet ks{"int4", "integer", KeyType::Int4, {}};
  auto add = [&](int64_t v) { ks.keys.push_back(int_variant(v, ks.keys.size())); };
  for (int64_t v : {int64_t{INT32_MIN}, int64_t{INT32_MIN} + 1, int64_t{INT32_MAX}, int64_t{INT32_MAX} - 1,
                    int64_t{0}, int64_t{-1}, int64_t{1}, int64_t{INT16_MIN} - 1, int64_t{INT16_MAX} + 1}) {
    add(v);
  }
  for (int64_t v = -5000; v <= 5000; ++v) add(v);
  while (ks.keys.size() < 110000) add(static_cast<int32_t>(rng()));
  ks.keys.push_back(std::nullopt);
  return ks;
}

KeySet int8_keys(std::mt19937_64& rng) {
  KeySet ks{"int8", "bigint", KeyType::Int8, {}};
  auto add = [&](int64_t v) { ks.keys.push_back(int_variant(v, ks.keys.size())); };
  for (int64_t v : {INT64_MIN, INT64_MIN + 1, INT64_MAX, INT64_MAX - 1, int64_t{0}, int64_t{-1}, int64_t{1}})
    add(v);
  for (int64_t edge : {int64_t{1} << 31, int64_t{1} << 32, int64_t{1} << 48, int64_t{1} << 62}) {
    for (int64_t d = -3; d <= 3; ++d) {
      add(edge + d);
      add(-edge + d);
    }
  }
  for (int64_t v = -5000; v <= 5000; ++v) add(v);
  while (ks.keys.size() < 60000) add(static_cast<int64_t>(rng()));                   // all 64 bits
  while (ks.keys.size() < 110000) add(static_cast<int64_t>(rng() >> (rng() % 64)));  // all magnitudes
  ks.keys.push_back(std::nullopt);
  return ks;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// A valid UTF-8 string of `chars` code points; `multibyte` mixes in 2-, 3- and 4-byte ones.
std::string random_text(std::mt19937_64& rng, size_t chars, bool multibyte) {
  std::string s;
  for (size_t i = 0; i < chars; ++i) {
    uint32_t cp = 0;
    switch (multibyte ? rng() % 5 : 0) {
      case 1: cp = 0x80 + rng() % (0x800 - 0x80); break;           // 2 bytes
      case 2: cp = 0x800 + rng() % (0xD800 - 0x800); break;        // 3 bytes, below surrogates
      case 3: cp = 0x10000 + rng() % (0x110000 - 0x10000); break;  // 4 bytes
      default: cp = 1 + rng() % 0x7F; break;                       // ASCII, incl. \t \n \\ (no NUL)
    }
    append_utf8(s, cp);
  }
  return s;
}

KeySet text_keys(std::mt19937_64& rng) {
  KeySet ks{"text", "text", KeyType::Text, {}};
  for (const char* s :
       {"", " ", "a", "A", "abc", "abc ", "\\", "\t", "\n", "\\N", "hello world!",
        "h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xf0\x9f\x90\x98"}) {
    ks.keys.emplace_back(s);
  }
  for (size_t len = 0; len <= 64; ++len) ks.keys.push_back(std::string(len, 'x'));  // every tail length
  for (size_t len : {1000u, 10000u, 100000u, 1000000u}) {                           // long (TOASTed)
    ks.keys.push_back(random_text(rng, len, false));
    ks.keys.push_back(random_text(rng, len / 2, true));
  }
  for (int i = 0; i < 100000; ++i) ks.keys.push_back("key-" + std::to_string(i));  // typical keys
  while (ks.keys.size() < 130000) {
    ks.keys.push_back(random_text(rng, rng() % 48, rng() % 2 == 0));
  }
  ks.keys.push_back(std::nullopt);
  return ks;
}

// The 16 bytes as text, in one of the forms uuid_in accepts.
std::string uuid_text(const unsigned char* b, size_t variant) {
  static const char* lower = "0123456789abcdef";
  static const char* upper = "0123456789ABCDEF";
  const char* digits = variant % 5 == 1 ? upper : lower;
  std::string s;
  for (int i = 0; i < 16; ++i) {
    s += digits[b[i] >> 4];
    s += digits[b[i] & 15];
    const bool canonical_hyphen = i == 3 || i == 5 || i == 7 || i == 9;
    if ((variant % 5 != 3 && canonical_hyphen) ||
        (variant % 5 == 4 && i % 2 == 1 && i < 15 && !canonical_hyphen)) {
      s += '-';
    }
  }
  return variant % 5 == 2 ? "{" + s + "}" : s;
}

KeySet uuid_keys(std::mt19937_64& rng) {
  KeySet ks{"uuid", "uuid", KeyType::Uuid, {}};
  unsigned char b[16];
  for (unsigned char fill : {0x00, 0xff}) {
    std::fill(std::begin(b), std::end(b), fill);
    ks.keys.push_back(uuid_text(b, 0));
  }
  while (ks.keys.size() < 110000) {
    for (auto& byte : b) byte = static_cast<unsigned char>(rng());
    if (ks.keys.size() % 2 == 0) {  // half of them shaped as version 4
      b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);
      b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);
    }
    ks.keys.push_back(uuid_text(b, ks.keys.size()));
  }
  ks.keys.push_back(std::nullopt);
  return ks;
}

// ---- PostgreSQL side ----------------------------------------------------------------------------

void exec_or_throw(PGconn* conn, const std::string& sql) {
  PGresult* res = PQexec(conn, sql.c_str());
  const ExecStatusType st = PQresultStatus(res);
  std::string err = PQresultErrorMessage(res);
  PQclear(res);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
    throw std::runtime_error(sql.substr(0, 200) + ": " + err);
}

// COPY text format: escape backslash and the row/column separators.
void append_copy_field(std::string& out, const std::string& value) {
  for (char ch : value) {
    switch (ch) {
      case '\\': out += "\\\\"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      default: out += ch;
    }
  }
}

void copy_keys(PGconn* conn, const std::string& table, const KeySet& ks) {
  PGresult* res = PQexec(conn, ("COPY " + table + " (id, k) FROM STDIN").c_str());
  const bool started = PQresultStatus(res) == PGRES_COPY_IN;
  PQclear(res);
  if (!started) throw std::runtime_error("COPY did not start: " + std::string(PQerrorMessage(conn)));
  std::string buf;
  for (size_t id = 0; id < ks.keys.size(); ++id) {
    buf += std::to_string(id);
    buf += '\t';
    if (ks.keys[id]) {
      append_copy_field(buf, *ks.keys[id]);
    } else {
      buf += "\\N";
    }
    buf += '\n';
    if (buf.size() > (1u << 20) || id + 1 == ks.keys.size()) {
      if (PQputCopyData(conn, buf.data(), static_cast<int>(buf.size())) != 1) {
        throw std::runtime_error("PQputCopyData: " + std::string(PQerrorMessage(conn)));
      }
      buf.clear();
    }
  }
  if (PQputCopyEnd(conn, nullptr) != 1)
    throw std::runtime_error("PQputCopyEnd: " + std::string(PQerrorMessage(conn)));
  res = PQgetResult(conn);
  const ExecStatusType st = PQresultStatus(res);
  std::string err = PQresultErrorMessage(res);
  PQclear(res);
  while ((res = PQgetResult(conn)) != nullptr) PQclear(res);
  if (st != PGRES_COMMAND_OK) throw std::runtime_error("COPY failed: " + err);
}

uint32_t be32_at(const PGresult* res, int row, int col) { return sw::load_be32(PQgetvalue(res, row, col)); }

std::string printable_key(const std::optional<std::string>& key) {
  if (!key) return "NULL";
  return "\"" + wire::printable(*key, 80) + "\"";
}

// Loads the keys into a fresh hash-partitioned table and compares every row; returns the number of
// non-NULL keys compared. Mismatches fail the test with the first few examples.
size_t compare_key_set(PGconn* conn, const KeySet& ks) {
  const std::string table = unique_name("bh_" + ks.label);
  exec_or_throw(
      conn, "CREATE TABLE " + table + " (id integer NOT NULL, k " + ks.sql_type + ") PARTITION BY HASH (k)");
  for (int r = 0; r < 8; ++r) {
    exec_or_throw(conn, "CREATE TABLE " + table + "_p" + std::to_string(r) + " PARTITION OF " + table +
                            " FOR VALUES WITH (MODULUS 8, REMAINDER " + std::to_string(r) + ")");
  }
  copy_keys(conn, table, ks);

  std::string sql =
      "SELECT id, k, k::text, (regexp_match(tableoid::regclass::text, '_p([0-7])$'))[1]::integer";
  for (uint32_t n : kBucketCounts) sql += ", shardwire.bucket_of(k, " + std::to_string(n) + ")";
  sql += " FROM " + table;
  PGresult* res = PQexecParams(conn, sql.c_str(), 0, nullptr, nullptr, nullptr, nullptr, /*resultFormat=*/1);
  if (PQresultStatus(res) != PGRES_TUPLES_OK) {
    std::string err = PQresultErrorMessage(res);
    PQclear(res);
    FAIL(ks.label << ": " << err);
  }

  const int rows = PQntuples(res);
  size_t compared = 0, nulls = 0, mismatches = 0;
  std::vector<bool> seen(ks.keys.size(), false);
  std::ostringstream examples;
  auto mismatch = [&](const std::optional<std::string>& key, const std::string& what) {
    if (++mismatches <= 5) examples << "  key " << printable_key(key) << ": " << what << "\n";
  };
  for (int row = 0; row < rows; ++row) {
    const uint32_t id = be32_at(res, row, 0);
    if (id >= ks.keys.size() || seen[id]) {
      mismatch(std::nullopt, "unexpected or repeated id " + std::to_string(id));
      continue;
    }
    seen[id] = true;
    const auto& key = ks.keys[id];
    const uint32_t partition = be32_at(res, row, 3);
    if (!key) {  // PostgreSQL puts NULL in the partition of hash 0; bucket_of(NULL) is bucket 0
      ++nulls;
      if (!PQgetisnull(res, row, 1) || partition != 0 || be32_at(res, row, 4) != sw::router::kNullKeyBucket) {
        mismatch(key, "NULL key not in partition 0 / bucket 0");
      }
      continue;
    }
    ++compared;
    const std::string_view binary(PQgetvalue(res, row, 1), PQgetlength(res, row, 1));
    const std::string_view text_out(PQgetvalue(res, row, 2), PQgetlength(res, row, 2));

    auto b8 = sw::router::bucket_of_text_value(ks.type, *key, 8);
    if (!b8) {
      mismatch(key, "C++ rejected it: " + b8.status().message);
      continue;
    }
    if (*b8 != partition) {
      mismatch(key, "C++ bucket of 8 is " + std::to_string(*b8) + ", PostgreSQL partition REMAINDER " +
                        std::to_string(partition));
    }
    for (size_t i = 0; i < std::size(kBucketCounts); ++i) {
      const uint32_t n = kBucketCounts[i];
      const uint32_t sql_bucket = be32_at(res, row, 4 + static_cast<int>(i));
      auto from_sent = sw::router::bucket_of_text_value(ks.type, *key, n);
      auto from_text = sw::router::bucket_of_text_value(ks.type, text_out, n);
      auto from_binary = sw::router::bucket_of_binary_value(ks.type, binary, n);
      if (!from_sent || !from_text || !from_binary || *from_sent != sql_bucket || *from_text != sql_bucket ||
          *from_binary != sql_bucket) {
        mismatch(key, "buckets of " + std::to_string(n) + ": SQL " + std::to_string(sql_bucket) +
                          ", C++ from sent text " +
                          (from_sent ? std::to_string(*from_sent) : from_sent.status().message) +
                          ", from PostgreSQL text " +
                          (from_text ? std::to_string(*from_text) : from_text.status().message) +
                          ", from binary " +
                          (from_binary ? std::to_string(*from_binary) : from_binary.status().message));
      }
    }
  }
  PQclear(res);
  exec_or_throw(conn, "DROP TABLE " + table);

  INFO(ks.label << " mismatches (first 5):\n" << examples.str());
  CHECK(rows == static_cast<int>(ks.keys.size()));
  CHECK(nulls == 1);
  CHECK(mismatches == 0);
  return compared;
}

}  // namespace

TEST_SUITE("bucket_hash_pg") {
  TEST_CASE("C++ bucket hash equals PostgreSQL hash partitioning and shardwire.bucket_of") {
    auto& cluster = shared_cluster();
    const std::string db = unique_name("bucket_hash");
    cluster.create_database(db);
    PgConn conn = connect_or_throw(cluster.conninfo(db));
    PGconn* pg = conn.get();

    // Installing the functions is idempotent.
    exec_or_throw(pg, sw::sqltext::bucket_function_sql());
    exec_or_throw(pg, sw::sqltext::bucket_function_sql());

    std::mt19937_64 rng(20240603);
    std::vector<std::pair<std::string, size_t>> counts;
    auto run = [&](KeySet ks) {
      const auto start = std::chrono::steady_clock::now();
      const size_t n = compare_key_set(pg, ks);
      counts.emplace_back(ks.label, n);
      MESSAGE(ks.label << ": " << n << " keys (+1 NULL) compared against PARTITION BY HASH MODULUS 8 and "
                       << "shardwire.bucket_of(k, 4096|1000|2147483647) in " << ms_since(start) << " ms");
      return ks;
    };
    run(int2_keys());
    run(int4_keys(rng));
    run(int8_keys(rng));
    KeySet text = run(text_keys(rng));
    text.label = "varchar";  // the same keys in a varchar column: text hashing via the implicit cast
    text.sql_type = "varchar";
    run(std::move(text));
    run(uuid_keys(rng));

    for (const auto& [label, n] : counts) {
      if (label == "int2") {
        CHECK(n == 65536);  // every int2 value
      } else {
        CHECK(n >= 100000);
      }
    }
  }

  TEST_CASE("shardwire.bucket_of resolves varchar and untyped literals to text, integer literals to int4") {
    auto& cluster = shared_cluster();
    const std::string db = unique_name("bucket_sql");
    cluster.create_database(db);
    PgConn conn = connect_or_throw(cluster.conninfo(db));
    exec_or_throw(conn.get(), sw::sqltext::bucket_function_sql());

    const std::string text_bucket =
        std::to_string(sw::router::bucket_of_text_value(KeyType::Text, "abc", 4096).value());
    CHECK(conn.value("SELECT shardwire.bucket_of('abc'::varchar, 4096)") == text_bucket);
    CHECK(conn.value("SELECT shardwire.bucket_of('abc'::varchar(10), 4096)") == text_bucket);
    CHECK(conn.value("SELECT shardwire.bucket_of('abc', 4096)") == text_bucket);
    CHECK(conn.value("SELECT pg_typeof(shardwire.bucket_of(42, 4096))::text") == "integer");
    const std::string int_bucket =
        std::to_string(sw::router::bucket_of_text_value(KeyType::Int8, "42", 4096).value());
    CHECK(conn.value("SELECT shardwire.bucket_of(42, 4096)") == int_bucket);
    CHECK(conn.value("SELECT shardwire.bucket_of(42::smallint, 4096)") == int_bucket);
    CHECK(conn.value("SELECT shardwire.bucket_of(NULL::uuid, 4096)") == "0");
    // Inlined into the calling query (no per-row function call): the plan shows the hash call.
    auto plan =
        conn.exec("EXPLAIN VERBOSE SELECT shardwire.bucket_of(g::bigint, 4096) FROM generate_series(1, 3) g");
    REQUIRE(plan.ok());
    CHECK(contains(plan.value(1, 0), "hashint8extended"));
    auto zero = conn.exec("SELECT shardwire.bucket_of(1::bigint, 0)");
    CHECK(zero.sqlstate() == "22012");
  }
}
