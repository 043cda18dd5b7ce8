#include "sqltext/bucket_sql.h"

#include "router/bucket_hash.h"

namespace sw::sqltext {

namespace {

// The constants of bucket_hash.h as SQL literals, so the two definitions cannot drift apart.
std::string seed_literal() { return std::to_string(router::kHashPartitionSeed); }  // fits in int8
std::string add_high_literal() { return std::to_string(router::kHashCombineAdd >> 32); }
std::string add_low_literal() { return std::to_string(router::kHashCombineAdd & 0xffffffffULL); }

// One overload: NULL -> bucket 0, else bucket_of_hash(<hash call>).
std::string overload(const std::string& sql_type, const std::string& hash_call) {
  return "CREATE OR REPLACE FUNCTION shardwire.bucket_of(key " + sql_type +
         ", buckets integer) RETURNS integer\n"
         "  LANGUAGE sql IMMUTABLE PARALLEL SAFE\n"
         "  RETURN CASE WHEN key IS NULL THEN 0\n"
         "              ELSE shardwire.bucket_of_hash(" +
         hash_call + ", buckets) END;\n\n";
}

}  // namespace

std::string bucket_function_sql() {
  const std::string seed = seed_literal();
  const std::string lo = "(h & 4294967295)";          // low 32 bits of h, as unsigned
  const std::string hi = "((h >> 32) & 4294967295)";  // high 32 bits of h, as unsigned
  // u = h + router::kHashCombineAdd (mod 2^64) as 32-bit halves: the low sum may carry into the high half.
  const std::string low_sum = "(" + lo + " + " + add_low_literal() + ")";
  const std::string u_lo = "(" + low_sum + " & 4294967295)";
  const std::string u_hi =
      "((" + hi + " + " + add_high_literal() + " + (" + low_sum + " >> 32)) & 4294967295)";
  // u mod m = ((u_hi mod m) * (2^32 mod m) + u_lo) mod m; with m < 2^31 every term fits in int8.
  const std::string body =
      "(((" + u_hi + " % buckets) * (4294967296 % buckets) + " + u_lo + ") % buckets)::integer";

  std::string sql;
  sql += "CREATE SCHEMA IF NOT EXISTS shardwire;\n\n";
  sql +=
      "-- bucket_of_hash(h, buckets) = ((h as unsigned 64-bit) + 0x49a0f4dd15e5a8e3) mod 2^64 mod buckets,\n"
      "-- i.e. hash_combine64(0, h) mod buckets, computed on 32-bit halves so int8 never overflows.\n"
      "CREATE OR REPLACE FUNCTION shardwire.bucket_of_hash(h bigint, buckets integer) RETURNS integer\n"
      "  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE\n"
      "  RETURN " +
      body + ";\n\n";
  sql +=
      "-- bucket_of(key, buckets): the shardwire bucket of a shard key; equals PostgreSQL's hash\n"
      "-- partition choice (seed 0x7A5B22367996DCFD). int2/int4 hash as the equal int8.\n";
  sql += overload("bigint", "pg_catalog.hashint8extended(key, " + seed + ")");
  sql += overload("integer", "pg_catalog.hashint8extended(key::bigint, " + seed + ")");
  sql += overload("smallint", "pg_catalog.hashint8extended(key::bigint, " + seed + ")");
  sql += overload("text", "pg_catalog.hashtextextended(key COLLATE \"C\", " + seed + ")");
  sql += overload("uuid", "pg_catalog.uuid_hash_extended(key, " + seed + ")");
  return sql;
}

}  // namespace sw::sqltext
