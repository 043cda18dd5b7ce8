// Integer key values from literals and parameters by PostgreSQL's cast rules (key_literal.h).
#include "router/key_literal.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "merge/parameter.h"

namespace sw::router::detail {
namespace {

constexpr uint32_t kInt2Oid = 21, kInt4Oid = 23, kInt8Oid = 20;
constexpr uint32_t kNumericOid = 1700, kFloat4Oid = 700, kFloat8Oid = 701;
// A float8 at or beyond this is the image of several int8 values: the key is undecidable.
constexpr double kExactFloat = 9007199254740992.0;  // 2^53

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool equals_folded(std::string_view text, std::string_view word) {
  if (text.size() != word.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (lower(text[i]) != word[i]) return false;
  }
  return true;
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

int rank(LiteralType type) {
  switch (type) {
    case LiteralType::Numeric: return 1;
    case LiteralType::Float4: return 2;
    case LiteralType::Float8: return 3;
    default: return 0;
  }
}

int width_rank(KeyType type) { return type == KeyType::Int2 ? 0 : type == KeyType::Int4 ? 1 : 2; }

bool in_range(int64_t value, KeyType type) {
  switch (type) {
    case KeyType::Int2: return value >= INT16_MIN && value <= INT16_MAX;
    case KeyType::Int4: return value >= INT32_MIN && value <= INT32_MAX;
    default: return true;
  }
}

Status out_of_range(KeyType type) {
  return Status::client("22003", std::string(key_type_name(type)) + " out of range");
}

// A numeric value as numeric_in reads it (PostgreSQL 15): the integer part (when it fits int64),
// whether a fraction is left and whether it is at least one half.
struct Numeral {
  bool negative = false;
  bool nan = false;
  bool infinite = false;
  bool fits = true;  // the integer part fits int64
  int64_t integer = 0;
  bool fraction = false;
  bool half = false;
};

// An exponent (e|E, a sign, digits) at text[i], if one is there: i moves past it. False when the
// e has no digits. Its magnitude is capped (any exponent that large overflows numeric anyway).
bool read_exponent(std::string_view text, size_t& i, long& exponent) {
  exponent = 0;
  if (i == text.size() || (text[i] != 'e' && text[i] != 'E')) return true;
  ++i;
  bool minus = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) minus = text[i++] == '-';
  if (i == text.size() || text[i] < '0' || text[i] > '9') return false;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (exponent < 100000000) exponent = exponent * 10 + (text[i] - '0');
  }
  if (minus) exponent = -exponent;
  return true;
}

Result<Numeral> read_numeral(std::string_view text) {
  const Status invalid = Status::client("22P02", "invalid input syntax for type numeric");
  text = trimmed(text);
  Numeral out;
  std::string_view word = text;
  if (!word.empty() && (word.front() == '+' || word.front() == '-')) word.remove_prefix(1);
  if (equals_folded(text, "nan")) {
    out.nan = true;
    return out;
  }
  if (equals_folded(word, "infinity") || equals_folded(word, "inf")) {
    out.infinite = true;
    return out;
  }
  size_t i = 0;
  out.negative = !text.empty() && text[0] == '-';
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) ++i;
  const size_t digits_begin = i;
  size_t digits = 0, before_point = 0;
  bool point = false;
  for (; i < text.size(); ++i) {
    if (text[i] >= '0' && text[i] <= '9') {
      ++digits;
      if (!point) ++before_point;
    } else if (text[i] == '.' && !point) {
      point = true;
    } else {
      break;
    }
  }
  const size_t digits_end = i;
  if (digits == 0) return invalid;
  long exponent = 0;
  if (!read_exponent(text, i, exponent) || i != text.size()) return invalid;
  // Digit k (0-based, the point skipped) is in the integer part when k < integer_digits.
  const long integer_digits = static_cast<long>(before_point) + exponent;
  long leading_zeros = 0;
  for (size_t j = digits_begin; j < digits_end && (text[j] == '0' || text[j] == '.'); ++j) {
    if (text[j] == '0') ++leading_zeros;
  }
  // numeric's weight is at most 32767 base-10000 digits (NUMERIC_WEIGHT_MAX).
  if (leading_zeros < static_cast<long>(digits) && integer_digits - leading_zeros > 131072)
    return Status::client("22003", "value overflows numeric format");
  // |integer part| <= 2^63 while it fits; past that only `fits` matters.
  constexpr uint64_t kLimit = uint64_t{1} << 63;
  uint64_t magnitude = 0;
  long k = 0;
  auto append = [&](int digit) {
    if (!out.fits) return;
    if (magnitude > (kLimit - static_cast<uint64_t>(digit)) / 10) {
      out.fits = false;
      return;
    }
    magnitude = magnitude * 10 + static_cast<uint64_t>(digit);
  };
  for (size_t j = digits_begin; j < digits_end; ++j) {
    if (text[j] == '.') continue;
    const int digit = text[j] - '0';
    if (k < integer_digits) {
      append(digit);
    } else {
      if (k == integer_digits && digit >= 5) out.half = true;
      if (digit != 0) out.fraction = true;
    }
    ++k;
  }
  for (; k < integer_digits && out.fits && magnitude != 0; ++k) append(0);  // the exponent's zeros
  if (magnitude == kLimit && !out.negative) out.fits = false;
  if (out.fits)
    out.integer = out.negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return out;
}

// float8in / float4in (PostgreSQL 15): strtod/strtof, surrounding spaces, 22003 on overflow or
// underflow to zero.
Result<double> read_float(std::string_view text, bool single) {
  const char* type = single ? "real" : "double precision";
  const Status invalid = Status::client("22P02", std::string("invalid input syntax for type ") + type);
  const std::string copy(trimmed(text));  // strtod needs a terminated string
  if (copy.empty()) return invalid;
  errno = 0;
  char* end = nullptr;
  const double value =
      single ? static_cast<double>(std::strtof(copy.c_str(), &end)) : std::strtod(copy.c_str(), &end);
  if (end == copy.c_str() || *end != '\0') return invalid;
  if (errno == ERANGE && (value == 0.0 || std::isinf(value)))
    return Status::client("22003", std::string("value is out of range for type ") + type);
  return value;
}

Result<int64_t> numeral_to_int(const Numeral& n, KeyType key) {
  if (n.nan) return Status::client("0A000", std::string("cannot convert NaN to ") + key_type_name(key));
  if (n.infinite)
    return Status::client("0A000", std::string("cannot convert infinity to ") + key_type_name(key));
  if (!n.fits) return out_of_range(key);
  int64_t value = n.integer;
  if (n.half && __builtin_add_overflow(value, n.negative ? -1 : 1, &value))  // half away from zero
    return out_of_range(key);
  if (!in_range(value, key)) return out_of_range(key);
  return value;
}

}  // namespace

namespace {

// float8 -> int2/4/8 (dtoi8 and friends; float4 values are exact in float8): rint, then 22003
// when NaN or outside the type.
Result<int64_t> float_to_int(double value, KeyType key) {
  if (std::isnan(value)) return out_of_range(key);
  const double rounded = std::rint(value);
  double low = -9223372036854775808.0;  // the type's minimum, exact in float8
  if (key == KeyType::Int4) low = -2147483648.0;
  if (key == KeyType::Int2) low = -32768.0;
  if (!(rounded >= low && rounded < -low)) return out_of_range(key);
  return static_cast<int64_t>(rounded);
}

// The integer of a number token: int4 or int8 when its digits fit (PostgreSQL's make_const),
// else numeric.
Literal number_token(std::string_view text) {
  Literal out;
  out.text = text;
  if (auto value = parse_int_text(KeyType::Int8, text); value.is_ok()) {
    out.type = LiteralType::Int;
    out.integer = value.value();
    out.width = in_range(out.integer, KeyType::Int4) ? KeyType::Int4 : KeyType::Int8;
    return out;
  }
  out.type = LiteralType::Numeric;
  return out;
}

// `from` cast explicitly to the type named `cast` (a literal's or a parameter's).
Result<Literal> cast_to(const Literal& from, std::string_view cast) {
  Literal out;
  out.text = from.text;
  KeyType width = KeyType::Int8;
  if (cast == "int2" || cast == "int4" || cast == "int8") {
    width = cast == "int2" ? KeyType::Int2 : cast == "int4" ? KeyType::Int4 : KeyType::Int8;
    auto value = assigned_key(from, width);
    if (!value) return value.status();
    out.type = LiteralType::Int;
    out.width = width;
    out.integer = value.value();
    return out;
  }
  if (cast == "numeric") {
    if (from.type == LiteralType::Unknown) {
      if (auto n = read_numeral(from.text); !n) return n.status();
    } else if (from.type != LiteralType::Numeric && from.type != LiteralType::Int) {
      out.type = LiteralType::Other;  // float -> numeric: not needed for keys
      return out;
    }
    out.type = from.type == LiteralType::Int ? LiteralType::Int : LiteralType::Numeric;
    out.integer = from.integer;
    out.width = from.width;
    return out;
  }
  if (cast == "float4" || cast == "float8") {
    const bool single = cast == "float4";
    out.type = single ? LiteralType::Float4 : LiteralType::Float8;
    if (from.type == LiteralType::Int) {
      out.real =
          single ? static_cast<double>(static_cast<float>(from.integer)) : static_cast<double>(from.integer);
      return out;
    }
    if (from.type == LiteralType::Float4 || from.type == LiteralType::Float8) {
      out.real = single ? static_cast<double>(static_cast<float>(from.real)) : from.real;
      return out;
    }
    auto value = read_float(from.text, single);  // numeric_float8 prints and reads again
    if (!value) return value.status();
    out.real = value.value();
    return out;
  }
  out.type = LiteralType::Other;
  return out;
}

std::string_view cast_of_oid(uint32_t oid) {
  switch (oid) {
    case kInt2Oid: return "int2";
    case kInt4Oid: return "int4";
    case kInt8Oid: return "int8";
    case kNumericOid: return "numeric";
    case kFloat4Oid: return "float4";
    case kFloat8Oid: return "float8";
    default: return oid == 0 ? "" : "other";
  }
}

IntKey from_float(double value, KeyType key) {
  if (std::isnan(value) || std::isinf(value) || value != std::floor(value)) return {IntKeyOutcome::NoRow, 0};
  if (std::fabs(value) >= kExactFloat) return {IntKeyOutcome::Undecidable, 0};
  const auto integer = static_cast<int64_t>(value);
  if (!in_range(integer, key)) return {IntKeyOutcome::NoRow, 0};
  return {IntKeyOutcome::Value, integer};
}

IntKey from_int(int64_t value, KeyType key) {
  return in_range(value, key) ? IntKey{IntKeyOutcome::Value, value} : IntKey{IntKeyOutcome::NoRow, 0};
}

}  // namespace

Result<Literal> read_literal(const parser::Value& value, const wire::BindParam* param, uint32_t param_oid,
                             std::string& scratch) {
  Literal base;
  std::string_view cast = value.cast;
  if (param != nullptr) {
    std::string_view bytes = param->bytes;
    if (param_oid != 0) cast = cast_of_oid(param_oid);
    if (param->binary) {
      if (cast != "numeric" && cast != "float4" && cast != "float8") return Literal{};  // Other
      auto text = merge::binary_to_text(param_oid, bytes);
      if (!text) return text.status();
      scratch = std::move(text.value());
      bytes = scratch;
    }
    base.type = LiteralType::Unknown;
    base.text = bytes;
  } else if (value.kind == parser::ValueKind::Number) {
    base = number_token(value.text);
  } else if (value.kind == parser::ValueKind::String) {
    base.type = LiteralType::Unknown;
    base.text = value.text;
  } else {
    return Literal{};
  }
  if (cast.empty()) return base;
  return cast_to(base, cast);
}

void widen(KeyComparison& comparison, const Literal& item) {
  if (rank(item.type) > rank(comparison.type)) comparison.type = item.type;
  if (item.type == LiteralType::Int && width_rank(item.width) > width_rank(comparison.width))
    comparison.width = item.width;
}

Result<IntKey> compared_key(const Literal& item, const KeyComparison& comparison, KeyType key) {
  switch (comparison.type) {
    case LiteralType::Numeric: {
      if (item.type == LiteralType::Int) return from_int(item.integer, key);
      auto n = read_numeral(item.text);
      if (!n) return n.status();
      if (n->nan || n->infinite || n->fraction || !n->fits) return IntKey{IntKeyOutcome::NoRow, 0};
      return from_int(n->integer, key);
    }
    case LiteralType::Float4:
    case LiteralType::Float8: {
      const bool single = comparison.type == LiteralType::Float4;
      double value = item.real;
      if (item.type == LiteralType::Int) {
        value = single ? static_cast<double>(static_cast<float>(item.integer))
                       : static_cast<double>(item.integer);
      } else if (item.type != LiteralType::Float4 && item.type != LiteralType::Float8) {
        auto read = read_float(item.text, single);
        if (!read) return read.status();
        value = read.value();
      } else if (single) {
        value = static_cast<double>(static_cast<float>(value));
      }
      return from_float(value, key);
    }
    default: break;
  }
  if (item.type == LiteralType::Int) return from_int(item.integer, key);
  auto value = parse_int_text(comparison.width, item.text);  // an unknown read as the common type
  if (!value) return value.status();
  return from_int(value.value(), key);
}

Result<int64_t> assigned_key(const Literal& item, KeyType key) {
  switch (item.type) {
    case LiteralType::Int:
      if (!in_range(item.integer, key)) return out_of_range(key);
      return item.integer;
    case LiteralType::Numeric: {
      auto n = read_numeral(item.text);
      if (!n) return n.status();
      return numeral_to_int(n.value(), key);
    }
    case LiteralType::Float4:
    case LiteralType::Float8: return float_to_int(item.real, key);
    default: return parse_int_text(key, item.text);
  }
}

}  // namespace sw::router::detail
