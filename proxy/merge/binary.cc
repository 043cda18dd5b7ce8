#include "merge/binary.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "merge/binary_array.h"
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

bool all_digits(std::string_view s) {
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// numeric_out's text ("-12.340", "NaN", "Infinity", "-Infinity") as numeric_send writes it:
// ndigits, weight, sign, dscale (int16 each), then the base-10000 digits with leading and
// trailing zero digits stripped (zero: no digits, weight 0, positive; specials: no digits).
Result<std::string> numeric_binary(std::string_view text) {
  constexpr uint16_t kNegative = 0x4000, kNaN = 0xC000, kPlusInf = 0xD000, kMinusInf = 0xF000;
  constexpr size_t kMaxScale = 0x3FFF;  // NUMERIC_DSCALE_MAX
  std::string out;
  const uint16_t special = text == "NaN"         ? kNaN
                           : text == "Infinity"  ? kPlusInf
                           : text == "-Infinity" ? kMinusInf
                                                 : 0;
  if (special != 0) {
    put_be(out, 0, 4);  // ndigits, weight
    put_be(out, special, 2);
    // numeric_send reads the dscale of a special value from its header's short-format bits: 32
    // for ±Infinity (0xD000 and 0xF000 share bit 0x1000), 0 for NaN.
    put_be(out, special == kNaN ? 0 : 32, 2);
    return out;
  }
  std::string_view s = text;
  bool negative = !s.empty() && s[0] == '-';
  if (negative) s.remove_prefix(1);
  const size_t point = s.find('.');
  const std::string_view whole = s.substr(0, point);
  const std::string_view fraction =
      point == std::string_view::npos ? std::string_view() : s.substr(point + 1);
  if (whole.empty() || !all_digits(whole) || !all_digits(fraction) || fraction.size() > kMaxScale ||
      (point != std::string_view::npos && fraction.empty()))
    return bad(oid::kNumeric);
  std::string padded((4 - whole.size() % 4) % 4, '0');
  padded.append(whole);
  const auto whole_groups = static_cast<int>(padded.size() / 4);
  padded.append(fraction);
  padded.append((4 - fraction.size() % 4) % 4, '0');
  std::vector<uint16_t> digits;
  for (size_t i = 0; i < padded.size(); i += 4) {
    digits.push_back(static_cast<uint16_t>((padded[i] - '0') * 1000 + (padded[i + 1] - '0') * 100 +
                                           (padded[i + 2] - '0') * 10 + (padded[i + 3] - '0')));
  }
  size_t first = 0, last = digits.size();
  while (first < last && digits[first] == 0) ++first;
  while (last > first && digits[last - 1] == 0) --last;
  int weight = whole_groups - 1 - static_cast<int>(first);
  if (first == last) {
    weight = 0;
    negative = false;
  }
  if (weight > 0x7FFF) return bad(oid::kNumeric);
  put_be(out, last - first, 2);
  put_be(out, static_cast<uint16_t>(static_cast<int16_t>(weight)), 2);
  put_be(out, negative ? kNegative : 0, 2);
  put_be(out, fraction.size(), 2);
  for (size_t i = first; i < last; ++i) put_be(out, digits[i], 2);
  return out;
}

// interval_send: microseconds (int64), days (int32), months (int32).
Result<std::string> interval_binary(std::string_view text) {
  auto parts = decode_interval_parts(text);
  if (!parts) return parts.status();
  std::string out;
  put_be(out, static_cast<uint64_t>(parts->microseconds), 8);
  put_be(out, static_cast<uint32_t>(static_cast<int32_t>(parts->days)), 4);
  put_be(out, static_cast<uint32_t>(static_cast<int32_t>(parts->months)), 4);
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
    case oid::kTimestamptz:
    case oid::kInterval:
    case oid::kNumeric: return true;
    default: return array_element_type(type_oid) != 0;
  }
}

Result<std::string> to_binary(uint32_t type_oid, std::string_view text, DateReading dates) {
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
    case oid::kNumeric: return numeric_binary(text);
    case oid::kInterval: return interval_binary(text);
    default:
      if (const uint32_t element = array_element_type(type_oid)) return array_to_binary(element, text);
      break;
  }
  if (!has_binary_form(type_oid)) return bad(type_oid);
  auto value = decode_text(type_oid, text, dates);
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
