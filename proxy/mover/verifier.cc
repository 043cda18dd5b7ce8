#include "mover/verifier.h"

#include <future>

#include "catalog/pq.h"
#include "mover/copier.h"
#include "sqltext/catalog_sql.h"

namespace sw::mover {
namespace {

// Per-table sums are numeric in SQL; across tables they are added as 128-bit integers: a table's
// sum has |value| < rows * 2^63, far inside 2^127.
__extension__ typedef __int128 Int128;

bool parse_int128(const std::string& text, Int128* out) {
  size_t at = 0;
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) at = 1;
  if (at == text.size()) return false;
  Int128 value = 0;
  for (; at < text.size(); ++at) {
    if (text[at] < '0' || text[at] > '9') return false;
    value = value * 10 + (text[at] - '0');
  }
  *out = negative ? -value : value;
  return true;
}

std::string int128_text(Int128 value) {
  if (value == 0) return "0";
  const bool negative = value < 0;
  std::string digits;
  while (value != 0) {
    const int digit = static_cast<int>(value % 10);
    digits += static_cast<char>('0' + (digit < 0 ? -digit : digit));
    value /= 10;
  }
  if (negative) digits += '-';
  return {digits.rbegin(), digits.rend()};
}

// Every non-dropped column, by name (name sorts bytewise), quoted and joined by ", ".
Result<std::string> columns_by_name(PGconn* conn, const std::string& table_sql, const std::string& context) {
  auto res = run_sql(conn,
                     "SELECT string_agg(quote_ident(attname), ', ' ORDER BY attname) FROM pg_attribute "
                     "WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped",
                     context, {table_sql});
  if (!res) return res.status();
  return catalog::text_value(res->get(), 0, 0);
}

}  // namespace

Result<std::map<uint32_t, BucketDigest>> bucket_digests(PGconn* conn,
                                                        const std::vector<config::ShardedTable>& tables,
                                                        const BucketSet& buckets) {
  std::map<uint32_t, Int128> sums;
  std::map<uint32_t, BucketDigest> digests;
  for (uint32_t bucket : buckets.list()) {
    digests[bucket] = BucketDigest{};
    sums[bucket] = 0;
  }
  if (buckets.empty()) return digests;
  for (const config::ShardedTable& table : tables) {
    const std::string context = "checksums of " + table.name;
    auto expression = bucket_expression(table, buckets.bucket_count());
    if (!expression) return expression.status();
    auto name = resolve_table(conn, table.name);
    if (!name) return Status::server(name.status().sqlstate, context + ": " + name.status().message);
    auto columns = columns_by_name(conn, *name, context);
    if (!columns) return columns.status();
    const std::string row_hash = "hashtextextended(" + sqltext::quote_literal(table.name + ":") + " || ROW(" +
                                 *columns + ")::text, 0)";
    auto res =
        run_sql(conn,
                "SELECT " + *expression + ", count(*), sum(" + row_hash + ")::text FROM " + *name +
                    " WHERE " + *expression + " = ANY('" + buckets.array_literal() + "'::int[]) GROUP BY 1",
                context);
    if (!res) return res.status();
    for (int row = 0; row < PQntuples(res->get()); ++row) {
      int64_t bucket = 0, count = 0;
      Int128 sum = 0;
      if (!catalog::parse_int64(res->get(), row, 0, &bucket) ||
          !catalog::parse_int64(res->get(), row, 1, &count) ||
          !parse_int128(catalog::text_value(res->get(), row, 2), &sum) ||
          !digests.count(static_cast<uint32_t>(bucket))) {
        return Status::server("XX000", context + ": unexpected result row " + std::to_string(row));
      }
      digests[static_cast<uint32_t>(bucket)].rows += static_cast<uint64_t>(count);
      sums[static_cast<uint32_t>(bucket)] += sum;
    }
  }
  for (auto& [bucket, digest] : digests) digest.checksum = int128_text(sums[bucket]);
  return digests;
}

std::vector<uint32_t> mismatched_buckets(const std::map<uint32_t, BucketDigest>& a,
                                         const std::map<uint32_t, BucketDigest>& b) {
  static const BucketDigest kEmpty{};
  auto digest_of = [](const std::map<uint32_t, BucketDigest>& m, uint32_t bucket) -> const BucketDigest& {
    auto it = m.find(bucket);
    return it == m.end() ? kEmpty : it->second;
  };
  std::vector<uint32_t> out;
  auto ia = a.begin();
  auto ib = b.begin();
  // Walk both ascending maps together so every bucket of either side is looked at once.
  while (ia != a.end() || ib != b.end()) {
    uint32_t bucket;
    if (ib == b.end() || (ia != a.end() && ia->first < ib->first)) {
      bucket = (ia++)->first;
    } else if (ia == a.end() || ib->first < ia->first) {
      bucket = (ib++)->first;
    } else {
      bucket = ia->first;
      ++ia;
      ++ib;
    }
    if (!(digest_of(a, bucket) == digest_of(b, bucket))) out.push_back(bucket);
  }
  return out;
}

Result<std::vector<uint32_t>> compare_shards(PGconn* a, PGconn* b,
                                             const std::vector<config::ShardedTable>& tables,
                                             const BucketSet& buckets) {
  auto b_scan = std::async(std::launch::async, [&] { return bucket_digests(b, tables, buckets); });
  auto a_digests = bucket_digests(a, tables, buckets);
  auto b_digests = b_scan.get();
  if (!a_digests) return a_digests.status();
  if (!b_digests) return b_digests.status();
  return mismatched_buckets(*a_digests, *b_digests);
}

}  // namespace sw::mover
