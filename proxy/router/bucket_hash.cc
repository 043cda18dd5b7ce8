#include "router/bucket_hash.h"

#include <cstring>
#include <string>

namespace sw::router {

namespace {

// ---- lookup3 (Bob Jenkins, 2006) as PostgreSQL uses it ---------------------------------------

// Initial state: the golden-ratio constant plus PostgreSQL's own offset 3923095, plus the length.
constexpr uint32_t kInitBase = 0x9e3779b9u + 3923095u;

constexpr uint32_t rotl(uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }

// Reversible mixing of three 32-bit words (lookup3's mix()).
inline void mix(uint32_t& a, uint32_t& b, uint32_t& c) {
  a -= c;
  a ^= rotl(c, 4);
  c += b;
  b -= a;
  b ^= rotl(a, 6);
  a += c;
  c -= b;
  c ^= rotl(b, 8);
  b += a;
  a -= c;
  a ^= rotl(c, 16);
  c += b;
  b -= a;
  b ^= rotl(a, 19);
  a += c;
  c -= b;
  c ^= rotl(b, 4);
  b += a;
}

// Final avalanche of (a, b, c) into c and b (lookup3's final()).
inline void final_mix(uint32_t& a, uint32_t& b, uint32_t& c) {
  c ^= b;
  c -= rotl(b, 14);
  a ^= c;
  a -= rotl(c, 11);
  b ^= a;
  b -= rotl(a, 25);
  c ^= b;
  c -= rotl(b, 16);
  a ^= c;
  a -= rotl(c, 4);
  b ^= a;
  b -= rotl(a, 14);
  c ^= b;
  c -= rotl(b, 24);
}

// A non-zero seed is hashed first, as a 12-byte block (seed high, seed low, zero).
inline void absorb_seed(uint32_t& a, uint32_t& b, uint32_t& c, uint64_t seed) {
  if (seed == 0) return;
  a += static_cast<uint32_t>(seed >> 32);
  b += static_cast<uint32_t>(seed);
  mix(a, b, c);
}

inline uint32_t load_le32(const unsigned char* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

// ---- text-form parsing -------------------------------------------------------------------------

// isspace() in the C and UTF-8 locales.
constexpr bool is_space(char ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\v' || ch == '\f' || ch == '\r';
}

constexpr int hex_value(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

struct IntRange {
  int64_t min;
  int64_t max;
};

IntRange int_range(KeyType type) {
  switch (type) {
    case KeyType::Int2: return {INT16_MIN, INT16_MAX};
    case KeyType::Int4: return {INT32_MIN, INT32_MAX};
    default: return {INT64_MIN, INT64_MAX};
  }
}

bool is_int_type(KeyType type) {
  return type == KeyType::Int2 || type == KeyType::Int4 || type == KeyType::Int8;
}

Status invalid_syntax(KeyType type) {
  return Status::client("22P02", std::string("invalid input syntax for type ") + key_type_name(type));
}

Status out_of_range(KeyType type) {
  return Status::client("22003", std::string("value is out of range for type ") + key_type_name(type));
}

// Lowercase ASCII copy for name comparison (names are short; this is not on the data path).
std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) {
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  }
  return out;
}

}  // namespace

const char* key_type_name(KeyType type) {
  switch (type) {
    case KeyType::Int2: return "smallint";
    case KeyType::Int4: return "integer";
    case KeyType::Int8: return "bigint";
    case KeyType::Text: return "text";
    case KeyType::Uuid: return "uuid";
  }
  return "unknown";
}

Result<KeyType> key_type_from_name(std::string_view name) {
  const std::string n = ascii_lower(name);
  if (n == "smallint" || n == "int2") return KeyType::Int2;
  if (n == "integer" || n == "int" || n == "int4") return KeyType::Int4;
  if (n == "bigint" || n == "int8") return KeyType::Int8;
  if (n == "text" || n == "varchar" || n == "character varying") return KeyType::Text;
  if (n == "uuid") return KeyType::Uuid;
  return Status::config("unsupported shard key type \"" + std::string(name) +
                        "\" (expected smallint, integer, bigint, text, varchar or uuid)");
}

Result<KeyType> key_type_from_oid(uint32_t oid) {
  switch (oid) {
    case 21: return KeyType::Int2;
    case 23: return KeyType::Int4;
    case 20: return KeyType::Int8;
    case 25:                          // text
    case 1043: return KeyType::Text;  // varchar
    case 2950: return KeyType::Uuid;
    case 0: return Status::client("0A000", "shard key parameter has no declared type (OID 0)");
    default:
      return Status::client("0A000", "shard key parameter type OID " + std::to_string(oid) +
                                         " is not supported (smallint, integer, bigint, text, "
                                         "varchar or uuid)");
  }
}

uint64_t hash_bytes_extended(const unsigned char* data, size_t len, uint64_t seed) {
  // PostgreSQL passes the length as int; values are at most 1 GB, so this never truncates.
  uint32_t remaining = static_cast<uint32_t>(len);
  uint32_t a = kInitBase + remaining;
  uint32_t b = a;
  uint32_t c = a;
  absorb_seed(a, b, c, seed);

  const unsigned char* k = data;
  while (remaining >= 12) {
    a += load_le32(k);
    b += load_le32(k + 4);
    c += load_le32(k + 8);
    mix(a, b, c);
    k += 12;
    remaining -= 12;
  }
  // The last 0..11 bytes, zero-padded, are added as little-endian words; the third word goes in
  // one byte up, leaving c's lowest byte alone (lookup3 reserves it for the length).
  unsigned char tail[12] = {};
  if (remaining > 0) std::memcpy(tail, k, remaining);
  a += load_le32(tail);
  b += load_le32(tail + 4);
  c += load_le32(tail + 8) << 8;  // tail[11] is always zero here, so nothing is shifted out
  final_mix(a, b, c);
  return (uint64_t{b} << 32) | c;
}

uint64_t hash_uint32_extended(uint32_t value, uint64_t seed) {
  uint32_t a = kInitBase + 4;
  uint32_t b = a;
  uint32_t c = a;
  absorb_seed(a, b, c, seed);
  a += value;
  final_mix(a, b, c);
  return (uint64_t{b} << 32) | c;
}

uint64_t hash_int8(int64_t value) {
  // Fold the high half into the low half so that every int8 in int4 range hashes as that int4:
  // for non-negative values the high half is 0, for negative ones it is all ones (xor'ed inverted).
  const auto lo = static_cast<uint32_t>(static_cast<uint64_t>(value));
  const auto hi = static_cast<uint32_t>(static_cast<uint64_t>(value) >> 32);
  const uint32_t folded = lo ^ (value >= 0 ? hi : ~hi);
  return hash_uint32_extended(folded, kHashPartitionSeed);
}

uint64_t hash_text(std::string_view bytes) {
  return hash_bytes_extended(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
                             kHashPartitionSeed);
}

uint64_t hash_uuid(const unsigned char uuid[16]) { return hash_bytes_extended(uuid, 16, kHashPartitionSeed); }

Result<int64_t> parse_int_text(KeyType type, std::string_view text) {
  if (!is_int_type(type)) return Status::proxy("XX000", "parse_int_text called for a non-integer type");
  const IntRange range = int_range(type);
  size_t i = 0;
  const size_t n = text.size();
  while (i < n && is_space(text[i])) ++i;
  bool negative = false;
  if (i < n && (text[i] == '-' || text[i] == '+')) {
    negative = text[i] == '-';
    ++i;
  }
  if (i == n || text[i] < '0' || text[i] > '9') return invalid_syntax(type);
  // Accumulate negatively (the negative range is one larger), checking the type's range at every
  // digit: PostgreSQL reports overflow as soon as the digits overflow, before looking further.
  int64_t acc = 0;
  for (; i < n && text[i] >= '0' && text[i] <= '9'; ++i) {
    const int digit = text[i] - '0';
    if (__builtin_mul_overflow(acc, 10, &acc) || __builtin_sub_overflow(acc, digit, &acc) ||
        acc < range.min) {
      return out_of_range(type);
    }
  }
  while (i < n && is_space(text[i])) ++i;
  if (i != n) return invalid_syntax(type);
  if (!negative) {
    if (acc < -range.max) return out_of_range(type);
    acc = -acc;
  }
  return acc;
}

Result<std::array<unsigned char, 16>> parse_uuid_text(std::string_view text) {
  std::array<unsigned char, 16> out{};
  size_t i = 0;
  const size_t n = text.size();
  const bool braces = n > 0 && text[0] == '{';
  if (braces) ++i;
  for (size_t byte = 0; byte < 16; ++byte) {
    if (i + 1 >= n) return invalid_syntax(KeyType::Uuid);
    const int hi = hex_value(text[i]);
    const int lo = hex_value(text[i + 1]);
    if (hi < 0 || lo < 0) return invalid_syntax(KeyType::Uuid);
    out[byte] = static_cast<unsigned char>((hi << 4) | lo);
    i += 2;
    // One optional hyphen after every second byte (four hex digits), but not after the last.
    if (byte % 2 == 1 && byte < 15 && i < n && text[i] == '-') ++i;
  }
  if (braces) {
    if (i >= n || text[i] != '}') return invalid_syntax(KeyType::Uuid);
    ++i;
  }
  if (i != n) return invalid_syntax(KeyType::Uuid);
  return out;
}

Result<uint64_t> hash_of_text_value(KeyType type, std::string_view text) {
  switch (type) {
    case KeyType::Text: return hash_text(text);
    case KeyType::Uuid: {
      auto uuid = parse_uuid_text(text);
      if (!uuid) return uuid.status();
      return hash_uuid(uuid->data());
    }
    default: {
      auto value = parse_int_text(type, text);
      if (!value) return value.status();
      return hash_int8(*value);
    }
  }
}

Result<uint64_t> hash_of_binary_value(KeyType type, std::string_view bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t need = 0;
  switch (type) {
    case KeyType::Text: return hash_text(bytes);
    case KeyType::Int2: need = 2; break;
    case KeyType::Int4: need = 4; break;
    case KeyType::Int8: need = 8; break;
    case KeyType::Uuid: need = 16; break;
  }
  if (bytes.size() < need) return Status::client("08P01", "insufficient data left in message");
  if (bytes.size() > need) {
    return Status::client("22P03", std::string("incorrect binary data format for a ") + key_type_name(type) +
                                       " shard key parameter");
  }
  if (type == KeyType::Uuid) return hash_uuid(p);
  uint64_t raw = 0;
  for (size_t i = 0; i < need; ++i) raw = (raw << 8) | p[i];
  // Sign-extend from the type's width.
  const int shift = static_cast<int>(64 - 8 * need);
  const auto value = static_cast<int64_t>(raw << shift) >> shift;
  return hash_int8(value);
}

Result<uint32_t> bucket_of_text_value(KeyType type, std::string_view text, uint32_t bucket_count) {
  if (bucket_count == 0) return Status::proxy("XX000", "bucket count is zero");
  auto hash = hash_of_text_value(type, text);
  if (!hash) return hash.status();
  return bucket_of_hash(*hash, bucket_count);
}

Result<uint32_t> bucket_of_binary_value(KeyType type, std::string_view bytes, uint32_t bucket_count) {
  if (bucket_count == 0) return Status::proxy("XX000", "bucket count is zero");
  auto hash = hash_of_binary_value(type, bytes);
  if (!hash) return hash.status();
  return bucket_of_hash(*hash, bucket_count);
}

}  // namespace sw::router
