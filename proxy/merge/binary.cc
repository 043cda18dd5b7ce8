#include "merge/binary.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "merge/value.h"

namespace sw::merge {
namespace {

// 2000-01-01, PostgreSQL's binary epoch, in days since 1970-01-01.
constexpr int64_t kEpochDays = 10957;
constexpr int64_t kUsPerDay = int64_t{86400} * 1000000;
constexpr Int128 kInfinity = static_cast<Int128>(1) << 120;  // value.cc's ±infinity

void put_be(std::string& out, uint64_t v, int bytes) {
  for (int shift = (bytes - 1) * 8; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((v >> shift) & 0xff));
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Hex digits (dashes skipped when `dashes`) as bytes; false on an odd count or a non-hex byte.
bool hex_bytes(std::string_view hex, bool dashes, std::string& out) {
  int high = -1;
  for (char c : hex) {
    if (dashes && c == '-') continue;
    const int digit = hex_digit(c);
    if (digit < 0) return false;
    if (high < 0) {
      high = digit;
    } else {
      out.push_back(static_cast<char>(high * 16 + digit));
      high = -1;
    }
  }
  return high < 0;
}

Status bad(uint32_t type_oid) {
  return Status::server("22P02", std::string("a shard returned a ") + type_name(type_oid) +
                                     " value shardwire cannot convert to the binary format");
}

// Days or microseconds since 1970 (value.cc) as PostgreSQL's binary date or timestamp.
std::string datetime(uint32_t type_oid, Int128 value) {
  std::string out;
  if (type_oid == oid::kDate) {
    int64_t days = value >= kInfinity    ? std::numeric_limits<int32_t>::max()
                   : value <= -kInfinity ? std::numeric_limits<int32_t>::min()
                                         : static_cast<int64_t>(value) - kEpochDays;
    put_be(out, static_cast<uint32_t>(static_cast<int32_t>(days)), 4);
    return out;
  }
  int64_t us = value >= kInfinity       ? std::numeric_limits<int64_t>::max()
               : value <= -kInfinity    ? std::numeric_limits<int64_t>::min()
               : type_oid == oid::kTime ? static_cast<int64_t>(value)
                                        : static_cast<int64_t>(value) - kEpochDays * kUsPerDay;
  put_be(out, static_cast<uint64_t>(us), 8);
  return out;
}

}  // namespace

bool has_binary_form(uint32_t type_oid) {
  switch (type_oid) {
    case oid::kBool:
    case oid::kInt2:
    case oid::kInt4:
    case oid::kInt8:
    case oid::kOid:
    case oid::kFloat4:
    case oid::kFloat8:
    case oid::kText:
    case oid::kVarchar:
    case oid::kBpchar:
    case oid::kName:
    case oid::kBytea:
    case oid::kUuid:
    case oid::kDate:
    case oid::kTime:
    case oid::kTimestamp:
    case oid::kTimestamptz: return true;
    default: return false;
  }
}

Result<std::string> to_binary(uint32_t type_oid, std::string_view text) {
  std::string out;
  switch (type_oid) {
    case oid::kText:
    case oid::kVarchar:
    case oid::kBpchar:
    case oid::kName: return std::string(text);
    case oid::kBytea:
      if (text.substr(0, 2) != "\\x" || !hex_bytes(text.substr(2), false, out)) return bad(type_oid);
      return out;
    case oid::kUuid:
      if (!hex_bytes(text, true, out) || out.size() != 16) return bad(type_oid);
      return out;
    default: break;
  }
  if (!has_binary_form(type_oid)) return bad(type_oid);
  auto value = decode_text(type_oid, text);
  if (!value) return value.status();
  if (const double* d = std::get_if<double>(&value->v)) {
    if (type_oid == oid::kFloat4) {
      const auto f = static_cast<float>(*d);
      uint32_t bits = 0;
      std::memcpy(&bits, &f, sizeof bits);
      put_be(out, bits, 4);
    } else {
      uint64_t bits = 0;
      std::memcpy(&bits, d, sizeof bits);
      put_be(out, bits, 8);
    }
    return out;
  }
  const Int128* n = std::get_if<Int128>(&value->v);
  if (n == nullptr) return bad(type_oid);
  switch (type_oid) {
    case oid::kBool: out.push_back(*n != 0 ? '\1' : '\0'); return out;
    case oid::kInt2: put_be(out, static_cast<uint16_t>(static_cast<int16_t>(*n)), 2); return out;
    case oid::kInt4:
    case oid::kOid: put_be(out, static_cast<uint32_t>(static_cast<int64_t>(*n)), 4); return out;
    case oid::kInt8: put_be(out, static_cast<uint64_t>(static_cast<int64_t>(*n)), 8); return out;
    default: return datetime(type_oid, *n);
  }
}

}  // namespace sw::merge
