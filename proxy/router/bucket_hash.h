// The bucket hash (docs/architecture.md §6.1-6.2): the bucket of a shard key, computed exactly as PostgreSQL
// 15 picks a hash partition, so that `buckets` a multiple of N with bucket i on shard i mod N gives the same
// layout as `PARTITION BY HASH (key) ... MODULUS N`.
//
//   bucket(key) = (H(key, kHashPartitionSeed) + kHashCombineAdd) mod 2^64 mod buckets
//
// H is PostgreSQL's extended hash for the key's type: hashint8extended for int2/int4/int8 (PostgreSQL
// hashes int2 and int4 as the equal int8 value), hashtextextended for text/varchar (deterministic
// collations: a hash of the bytes), uuid_hash_extended for uuid. Adding kHashCombineAdd is
// hash_combine64(0, h), what PostgreSQL does for a one-column partition key.
//
// Pure: no PostgreSQL linkage, no I/O, no allocation on the hashing paths; safe from any thread.
//
// Limits, shared with PostgreSQL itself:
//  * PostgreSQL's byte hash reads 32-bit words in the server's native byte order. This file
//    implements the little-endian result (x86-64, arm64); big-endian shards are not supported.
//  * Text is hashed as the bytes given. A shard stores text in its server encoding, so routing on
//    text keys assumes the client sends them in that encoding (client_encoding = server_encoding).
//    Nondeterministic (ICU) collations hash differently in PostgreSQL and are not supported.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace sw::router {

// HASH_PARTITION_SEED in PostgreSQL's partition code.
inline constexpr uint64_t kHashPartitionSeed = 0x7A5B22367996DCFDULL;
// hash_combine64(0, h) == h + kHashCombineAdd (mod 2^64).
inline constexpr uint64_t kHashCombineAdd = 0x49a0f4dd15e5a8e3ULL;
// PostgreSQL puts a NULL partition key in the partition of row hash 0; with buckets a multiple of
// the modulus that is bucket 0. shardwire.bucket_of(NULL, n) returns it too.
inline constexpr uint32_t kNullKeyBucket = 0;

// Shard key types. varchar keys are Text (PostgreSQL hashes varchar with the text functions).
enum class KeyType : uint8_t { Int2, Int4, Int8, Text, Uuid };

// PostgreSQL's name of the type, as used in its error messages: "smallint", "integer", "bigint",
// "text", "uuid".
const char* key_type_name(KeyType type);

// Type of a configured key. Accepts, case-insensitively: smallint/int2, integer/int/int4,
// bigint/int8, text, varchar/"character varying", uuid. Anything else: a Config-fault Status.
Result<KeyType> key_type_from_name(std::string_view name);

// Type of a parameter from its Parse OID: 21 int2, 23 int4, 20 int8, 25 text, 1043 varchar,
// 2950 uuid. OID 0 (unspecified: use the key column's configured type instead) and any other OID
// give a Client-fault Status with SQLSTATE 0A000.
Result<KeyType> key_type_from_oid(uint32_t oid);

// ---- PostgreSQL's extended hashes (src/common/hashfn.c, utils/adt/hashfunc.c, uuid.c) -----------

// hash_bytes_extended(k, len, seed): Bob Jenkins' lookup3 over the bytes, 64-bit result.
uint64_t hash_bytes_extended(const unsigned char* data, size_t len, uint64_t seed);
// hash_bytes_uint32_extended(k, seed): the same for one 32-bit value.
uint64_t hash_uint32_extended(uint32_t value, uint64_t seed);

// hashint8extended(value, kHashPartitionSeed); equals hashint4extended/hashint2extended for values
// in those types' ranges.
uint64_t hash_int8(int64_t value);
// hashtextextended(bytes, kHashPartitionSeed) under a deterministic collation.
uint64_t hash_text(std::string_view bytes);
// uuid_hash_extended(uuid, kHashPartitionSeed); `uuid` is the 16 bytes in network order.
uint64_t hash_uuid(const unsigned char uuid[16]);

// (key_hash + kHashCombineAdd) mod 2^64 mod bucket_count. Precondition: bucket_count > 0.
inline uint32_t bucket_of_hash(uint64_t key_hash, uint32_t bucket_count) {
  return static_cast<uint32_t>((key_hash + kHashCombineAdd) % bucket_count);
}

// ---- Values as they arrive from clients ------------------------------------------------------

// A key value in PostgreSQL's text form, parsed exactly as the type's input function does
// (PostgreSQL 15, C/UTF-8 locale):
//  * int2/int4/int8: optional ASCII whitespace (space \t \n \v \f \r), optional + or -, one or
//    more decimal digits, optional whitespace. Digits that overflow the type -> 22003 (even when
//    garbage follows, as in PostgreSQL); anything else malformed -> 22P02.
//  * uuid: 32 hex digits, either case, optionally wrapped in {}, with an optional '-' after any
//    group of four digits except the last; no whitespace. Malformed -> 22P02.
//  * text: the bytes as given (any length, including empty).
// Error messages name the type but never include the value.
Result<uint64_t> hash_of_text_value(KeyType type, std::string_view text);

// A key value in the binary wire format: int2/int4/int8 as 2/4/8 bytes big-endian, uuid as 16
// bytes, text as its raw bytes. As PostgreSQL's Bind: too few bytes -> 08P01 ("insufficient data
// left in message"), too many -> 22P03 ("incorrect binary data format").
Result<uint64_t> hash_of_binary_value(KeyType type, std::string_view bytes);

// The bucket of a text-form / binary-form value. bucket_count == 0 is a Proxy-fault error.
Result<uint32_t> bucket_of_text_value(KeyType type, std::string_view text, uint32_t bucket_count);
Result<uint32_t> bucket_of_binary_value(KeyType type, std::string_view bytes, uint32_t bucket_count);

// ---- Parsers behind the text form, for callers that need the value itself ------------------

// int2/int4/int8 text as above, range-checked for `type` (which must be an integer type).
Result<int64_t> parse_int_text(KeyType type, std::string_view text);
// uuid text as above; the 16 bytes in network order.
Result<std::array<unsigned char, 16>> parse_uuid_text(std::string_view text);

}  // namespace sw::router
