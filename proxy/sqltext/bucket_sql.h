// The SQL twin of the C++ bucket hash (bucket_hash.h), installed on every shard by
// `shardwire init` so shards can fence, copy and verify by bucket (docs/architecture.md §6.2).
#pragma once

#include <string>

namespace sw::sqltext {

// SQL that creates schema `shardwire` (if missing) and (re)defines
//
//   shardwire.bucket_of(key int8 | int4 | int2 | text | uuid, buckets int) RETURNS int
//
// equal to bucket_of_hash(hash_*(key), buckets) in C++ and to the partition PostgreSQL picks for a
// `PARTITION BY HASH (key)` table with MODULUS dividing `buckets`. varchar arguments resolve to the
// text version (implicit cast), untyped literals too; integer literals to int4. A NULL key gives
// bucket 0 (PostgreSQL's partition for a NULL key); `buckets` must be positive (0 raises
// division_by_zero). Also defines the helper shardwire.bucket_of_hash(h int8, buckets int).
//
// Built only from PostgreSQL's built-in hash functions (hashint8extended, hashtextextended with
// collation "C", i.e. the bytes, uuid_hash_extended) and int8 arithmetic: the unsigned 64-bit add
// and modulo are done on 32-bit halves so nothing overflows. The functions are LANGUAGE sql with
// SQL-standard bodies (bound at creation, immune to search_path), IMMUTABLE, PARALLEL SAFE and
// inlinable into the calling query.
//
// Idempotent: every statement can be re-run (CREATE SCHEMA IF NOT EXISTS, CREATE OR REPLACE).
// Not meant to run concurrently with itself (PostgreSQL may then report "tuple concurrently
// updated"). Requires PostgreSQL 14 or later; shardwire targets 15.
std::string bucket_function_sql();

}  // namespace sw::sqltext
