// Bucket hash (docs/architecture.md §6.1) against values computed by a real PostgreSQL 15.20 (x86-64), and
// the text/binary input forms against PostgreSQL's input functions.
//
// Expected hashes were obtained once with psql, e.g.
//   select k, hashint8extended(k, 8816678312871386365), hashint8extended(k, 0),
//          shardwire.bucket_of(k, 4096), shardwire.bucket_of(k, 8)
//   from unnest(array[0, 1, -1, 42, ...]::int8[]) k;
// (likewise hashtextextended / uuid_hash_extended); PostgreSQL prints them as signed int8, so they
// are written here as signed literals cast to uint64_t. shardwire.bucket_of was checked against
// real hash partitions by tests/integration/bucket_hash_pg_test.cc.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "router/bucket_hash.h"

using namespace sw::router;

namespace {

constexpr uint64_t u(int64_t signed_hash) { return static_cast<uint64_t>(signed_hash); }

std::string sqlstate_of_text(KeyType type, std::string_view text) {
  auto r = bucket_of_text_value(type, text, 4096);
  return r ? std::string("ok") : r.status().sqlstate;
}

std::string sqlstate_of_binary(KeyType type, std::string_view bytes) {
  auto r = bucket_of_binary_value(type, bytes, 4096);
  return r ? std::string("ok") : r.status().sqlstate;
}

int64_t int_of(KeyType type, std::string_view text) {
  auto r = parse_int_text(type, text);
  REQUIRE_MESSAGE(r.is_ok(), "\"" << std::string(text) << "\": " << r.status().message);
  return *r;
}

}  // namespace

TEST_CASE("hashint8extended equals PostgreSQL, with the partition seed and with seed 0") {
  struct Row {
    int64_t key;
    int64_t seeded;
    int64_t unseeded;
    uint32_t b4096;
    uint32_t b8;
  };
  const Row rows[] = {
      {0, -4403592609991167795, 4154612158245552303, 2480, 0},
      {1, 5968994663651403477, -3670598878359251130, 4024, 0},
      {-1, -5017072347659237694, -1888257769727981238, 4005, 5},
      {42, 7363975540656877951, 8010225493015854792, 2658, 2},
      {2147483647, -6050265599104649060, -9109110466470504941, 383, 7},
      {-2147483648LL, 4938542303000433043, 1977219185673256887, 2678, 6},
      {4294967296LL, 5968994663651403477, -3670598878359251130, 4024, 0},  // folds like 1
      {INT64_MIN, -6050265599104649060, -9109110466470504941, 383, 7},     // folds like INT32_MAX
      {INT64_MAX, 4938542303000433043, 1977219185673256887, 2678, 6},      // folds like INT32_MIN
  };
  for (const Row& r : rows) {
    CAPTURE(r.key);
    CHECK(hash_int8(r.key) == u(r.seeded));
    CHECK(bucket_of_hash(hash_int8(r.key), 4096) == r.b4096);
    CHECK(bucket_of_hash(hash_int8(r.key), 8) == r.b8);
    // Seed 0 skips the seed block: hashint8extended(k, 0).
    const auto lo = static_cast<uint32_t>(static_cast<uint64_t>(r.key));
    const auto hi = static_cast<uint32_t>(static_cast<uint64_t>(r.key) >> 32);
    CHECK(hash_uint32_extended(lo ^ (r.key >= 0 ? hi : ~hi), 0) == u(r.unseeded));
  }
}

TEST_CASE("hashtextextended equals PostgreSQL for every tail length class") {
  struct Row {
    std::string_view text;
    int64_t seeded;
    int64_t unseeded;
    uint32_t b4096;
  };
  const Row rows[] = {
      {"", -5700645584453517373, -6939563903564495251, 2214},
      {"a", -6705225459120232837, 3591986179850072241, 3934},
      {"abc", 3628778498291917250, -6747756470228489321, 2725},
      {"abcd", 4029384952263848046, -1038429303365892052, 2385},
      {"hello world", 7664296498819024037, 6947366892317592103, 3464},    // 11 bytes
      {"hello world!", -1886269529411655687, -2866487628948787489, 220},  // 12: one block, no tail
      {"hello world!!", 7458898085804086944, 2407105755976055416, 3971},  // 13
      {"The quick brown fox jumps over the lazy dog", 5870222023910117606, 2182139051089226439, 2505},
      {"h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xf0\x9f\x90\x98",
       -7357931878945284501, 6906296691447480123, 1870},  // 'héllo wörld ✓ 日本語 🐘', 32 bytes
  };
  for (const Row& r : rows) {
    CAPTURE(r.text);
    CHECK(hash_text(r.text) == u(r.seeded));
    CHECK(hash_bytes_extended(reinterpret_cast<const unsigned char*>(r.text.data()), r.text.size(), 0) ==
          u(r.unseeded));
    CHECK(bucket_of_text_value(KeyType::Text, r.text, 4096).value() == r.b4096);
    CHECK(bucket_of_binary_value(KeyType::Text, r.text, 4096).value() == r.b4096);
  }
}

TEST_CASE("the byte hash does not depend on the alignment of its input") {
  alignas(8) char buffer[64] = {};
  const std::string_view text = "The quick brown fox jumps";
  const uint64_t expected = hash_text(text);
  for (size_t offset = 0; offset < 8; ++offset) {
    text.copy(buffer + offset, text.size());
    CHECK(hash_text(std::string_view(buffer + offset, text.size())) == expected);
  }
}

TEST_CASE("uuid_hash_extended equals PostgreSQL") {
  struct Row {
    std::string_view text;
    int64_t seeded;
    int64_t unseeded;
    uint32_t b4096;
  };
  const Row rows[] = {
      {"00000000-0000-0000-0000-000000000000", -5281082146396728638, -6859010066814654381, 2981},
      {"ffffffff-ffff-ffff-ffff-ffffffffffff", -148986464341306210, 293445543803463785, 3457},
      {"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", 424513190990560493, 7543054272012930821, 1488},
  };
  for (const Row& r : rows) {
    CAPTURE(r.text);
    auto bytes = parse_uuid_text(r.text);
    REQUIRE(bytes.is_ok());
    CHECK(hash_uuid(bytes->data()) == u(r.seeded));
    CHECK(hash_bytes_extended(bytes->data(), 16, 0) == u(r.unseeded));
    CHECK(bucket_of_text_value(KeyType::Uuid, r.text, 4096).value() == r.b4096);
    const std::string_view raw(reinterpret_cast<const char*>(bytes->data()), 16);
    CHECK(bucket_of_binary_value(KeyType::Uuid, raw, 4096).value() == r.b4096);
  }
}

TEST_CASE("int2 and int4 hash as the equal int8, as PostgreSQL's cross-type hash opfamily") {
  for (const char* v : {"0", "1", "-1", "42", "-32768", "32767"}) {
    CAPTURE(v);
    const uint32_t b8 = bucket_of_text_value(KeyType::Int8, v, 4096).value();
    CHECK(bucket_of_text_value(KeyType::Int4, v, 4096).value() == b8);
    CHECK(bucket_of_text_value(KeyType::Int2, v, 4096).value() == b8);
  }
  CHECK(bucket_of_text_value(KeyType::Int4, "-2147483648", 4096).value() == 2678);
  CHECK(bucket_of_text_value(KeyType::Int4, "2147483647", 4096).value() == 383);
}

TEST_CASE("integer text forms accepted by PostgreSQL's int2in/int4in/int8in") {
  CHECK(int_of(KeyType::Int2, "-32768") == -32768);
  CHECK(int_of(KeyType::Int2, "32767") == 32767);
  CHECK(int_of(KeyType::Int4, "-2147483648") == INT32_MIN);
  CHECK(int_of(KeyType::Int4, "2147483647") == INT32_MAX);
  CHECK(int_of(KeyType::Int8, "-9223372036854775808") == INT64_MIN);
  CHECK(int_of(KeyType::Int8, "9223372036854775807") == INT64_MAX);
  CHECK(int_of(KeyType::Int8, " 12 ") == 12);
  CHECK(int_of(KeyType::Int8, "+12") == 12);
  CHECK(int_of(KeyType::Int8, "-0") == 0);
  CHECK(int_of(KeyType::Int8, "\t7\n") == 7);
  CHECK(int_of(KeyType::Int8, "\v7\f") == 7);
  CHECK(int_of(KeyType::Int8, "\r7") == 7);
  CHECK(int_of(KeyType::Int8, "00000000000000000000000001") == 1);
  CHECK(int_of(KeyType::Int2, "-000000000032768") == -32768);
}

TEST_CASE("integer text errors: 22003 out of range, 22P02 invalid syntax, as PostgreSQL 15") {
  CHECK(sqlstate_of_text(KeyType::Int2, "32768") == "22003");
  CHECK(sqlstate_of_text(KeyType::Int2, "-32769") == "22003");
  CHECK(sqlstate_of_text(KeyType::Int4, "2147483648") == "22003");
  CHECK(sqlstate_of_text(KeyType::Int4, "-2147483649") == "22003");
  CHECK(sqlstate_of_text(KeyType::Int8, "9223372036854775808") == "22003");
  CHECK(sqlstate_of_text(KeyType::Int8, "-9223372036854775809") == "22003");
  // Overflow is reported before trailing garbage is seen.
  CHECK(sqlstate_of_text(KeyType::Int8, "99999999999999999999x") == "22003");
  CHECK(sqlstate_of_text(KeyType::Int2, "99999x") == "22003");
  CHECK(sqlstate_of_text(KeyType::Int2, "-9223372036854775808") == "22003");
  for (const char* bad :
       {"", " ", "12x", "0x10", "1_000", "+-1", " - 1", "1 2", "1.0", "1e3", "-", "+", "abc",
        "\xc2\xa0"
        "7"}) {
    CAPTURE(bad);
    CHECK(sqlstate_of_text(KeyType::Int8, bad) == "22P02");
    CHECK(sqlstate_of_text(KeyType::Int4, bad) == "22P02");
    CHECK(sqlstate_of_text(KeyType::Int2, bad) == "22P02");
  }
  CHECK(sqlstate_of_text(KeyType::Int8, std::string_view("12\0", 3)) == "22P02");
  auto err = bucket_of_text_value(KeyType::Int8, "12x", 4096);
  CHECK(err.status().fault == sw::Fault::Client);
  CHECK(err.status().message == "invalid input syntax for type bigint");  // never the value
  CHECK(bucket_of_text_value(KeyType::Int2, "40000", 8).status().message ==
        "value is out of range for type smallint");
}

TEST_CASE("uuid text forms accepted by PostgreSQL's uuid_in") {
  const uint32_t expected = 1488;  // a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11
  for (const char* ok : {"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11",
                         "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}", "a0eebc999c0b4ef8bb6d6bb9bd380a11",
                         "A0EEBC999C0B4EF8BB6D6BB9BD380A11", "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11",
                         "a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11", "{a0eebc999c0b4ef8bb6d6bb9bd380a11}"}) {
    CAPTURE(ok);
    auto b = bucket_of_text_value(KeyType::Uuid, ok, 4096);
    REQUIRE(b.is_ok());
    CHECK(*b == expected);
  }
  for (const char* bad :
       {"", "{}", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-", "-a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        "a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11", " a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 ", "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}", "a0eebc9-99c0b-4ef8-bb6d-6bb9bd380a11",
        "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1", "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-}",
        "a-0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0e-ebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        "g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1100"}) {
    CAPTURE(bad);
    CHECK(sqlstate_of_text(KeyType::Uuid, bad) == "22P02");
  }
}

TEST_CASE("binary forms: big-endian integers of the type's width, 16-byte uuid, raw text") {
  using namespace std::string_view_literals;
  // -1 in each width, 42, and the extremes, must match the text form.
  CHECK(bucket_of_binary_value(KeyType::Int2, "\xff\xff"sv, 4096).value() == 4005);
  CHECK(bucket_of_binary_value(KeyType::Int4, "\xff\xff\xff\xff"sv, 4096).value() == 4005);
  CHECK(bucket_of_binary_value(KeyType::Int8, "\xff\xff\xff\xff\xff\xff\xff\xff"sv, 4096).value() == 4005);
  CHECK(bucket_of_binary_value(KeyType::Int2, "\x00\x2a"sv, 4096).value() == 2658);
  CHECK(bucket_of_binary_value(KeyType::Int4, "\x00\x00\x00\x2a"sv, 4096).value() == 2658);
  CHECK(bucket_of_binary_value(KeyType::Int8, "\x00\x00\x00\x00\x00\x00\x00\x2a"sv, 4096).value() == 2658);
  CHECK(bucket_of_binary_value(KeyType::Int4, "\x80\x00\x00\x00"sv, 4096).value() == 2678);
  CHECK(bucket_of_binary_value(KeyType::Int8, "\x80\x00\x00\x00\x00\x00\x00\x00"sv, 4096).value() == 383);
  CHECK(bucket_of_binary_value(KeyType::Int8, "\x7f\xff\xff\xff\xff\xff\xff\xff"sv, 4096).value() == 2678);
  CHECK(bucket_of_binary_value(KeyType::Int2, "\x80\x00"sv, 4096).value() ==
        bucket_of_text_value(KeyType::Int2, "-32768", 4096).value());
  CHECK(bucket_of_binary_value(KeyType::Text, ""sv, 4096).value() == 2214);
  CHECK(bucket_of_binary_value(KeyType::Uuid, std::string(16, '\0'), 4096).value() == 2981);
  CHECK(bucket_of_binary_value(KeyType::Uuid, std::string(16, '\xff'), 4096).value() == 3457);
}

TEST_CASE("binary forms of the wrong length: 08P01 when short, 22P03 when long, as PostgreSQL") {
  CHECK(sqlstate_of_binary(KeyType::Int2, "") == "08P01");
  CHECK(sqlstate_of_binary(KeyType::Int2, "\x01") == "08P01");
  CHECK(sqlstate_of_binary(KeyType::Int2, "\x01\x02\x03") == "22P03");
  CHECK(sqlstate_of_binary(KeyType::Int4, "\x01\x02") == "08P01");
  CHECK(sqlstate_of_binary(KeyType::Int4, std::string(8, '\x01')) == "22P03");
  CHECK(sqlstate_of_binary(KeyType::Int8, std::string(4, '\x01')) == "08P01");
  CHECK(sqlstate_of_binary(KeyType::Int8, std::string(9, '\x01')) == "22P03");
  CHECK(sqlstate_of_binary(KeyType::Uuid, std::string(15, '\x01')) == "08P01");
  CHECK(sqlstate_of_binary(KeyType::Uuid, std::string(17, '\x01')) == "22P03");
  CHECK(sqlstate_of_binary(KeyType::Uuid, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11") == "22P03");
}

TEST_CASE("bucket_of_hash is the unsigned 64-bit sum modulo the bucket count") {
  CHECK(bucket_of_hash(0, 4096) == (kHashCombineAdd % 4096));
  // The sum wraps: (2^64 - kHashCombineAdd) + kHashCombineAdd == 0 mod 2^64.
  CHECK(bucket_of_hash(0 - kHashCombineAdd, 4096) == 0);
  CHECK(bucket_of_hash(0 - kHashCombineAdd - 1, 4096) == 4095);
  CHECK(bucket_of_hash(UINT64_MAX, 1) == 0);
  CHECK(bucket_of_hash(UINT64_MAX - kHashCombineAdd, 4294967295u) == (UINT64_MAX % 4294967295u));
  CHECK(bucket_of_text_value(KeyType::Int8, "1", 0).status().sqlstate == "XX000");
  // With buckets a multiple of the modulus, the bucket mod the modulus is the partition.
  for (int64_t k = -1000; k <= 1000; ++k) {
    CHECK((bucket_of_hash(hash_int8(k), 4096) % 8) == bucket_of_hash(hash_int8(k), 8));
  }
}

TEST_CASE("key types from names and OIDs") {
  CHECK(key_type_from_name("smallint").value() == KeyType::Int2);
  CHECK(key_type_from_name("int2").value() == KeyType::Int2);
  CHECK(key_type_from_name("integer").value() == KeyType::Int4);
  CHECK(key_type_from_name("int").value() == KeyType::Int4);
  CHECK(key_type_from_name("INT4").value() == KeyType::Int4);
  CHECK(key_type_from_name("bigint").value() == KeyType::Int8);
  CHECK(key_type_from_name("int8").value() == KeyType::Int8);
  CHECK(key_type_from_name("text").value() == KeyType::Text);
  CHECK(key_type_from_name("varchar").value() == KeyType::Text);
  CHECK(key_type_from_name("character varying").value() == KeyType::Text);
  CHECK(key_type_from_name("UUID").value() == KeyType::Uuid);
  for (const char* bad : {"", "numeric", "char", "bpchar", "int16", "serial", "bigint "}) {
    CAPTURE(bad);
    auto r = key_type_from_name(bad);
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().fault == sw::Fault::Config);
  }
  CHECK(key_type_from_oid(21).value() == KeyType::Int2);
  CHECK(key_type_from_oid(23).value() == KeyType::Int4);
  CHECK(key_type_from_oid(20).value() == KeyType::Int8);
  CHECK(key_type_from_oid(25).value() == KeyType::Text);
  CHECK(key_type_from_oid(1043).value() == KeyType::Text);
  CHECK(key_type_from_oid(2950).value() == KeyType::Uuid);
  for (uint32_t bad : {0u, 1042u, 1700u, 19u, 26u}) {
    CAPTURE(bad);
    auto r = key_type_from_oid(bad);
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().sqlstate == "0A000");
  }
  CHECK(std::string(key_type_name(KeyType::Int8)) == "bigint");
  CHECK(std::string(key_type_name(KeyType::Uuid)) == "uuid");
}
