#include "merge/expression_number.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "merge/value.h"

namespace sw::merge::detail {

using Kind = Expression::Kind;

bool is_integer(uint32_t type) { return type == oid::kInt2 || type == oid::kInt4 || type == oid::kInt8; }

int rank(uint32_t type) {
  switch (type) {
    case oid::kInt2: return 0;
    case oid::kInt4: return 1;
    case oid::kInt8: return 2;
    case oid::kNumeric: return 3;
    case oid::kFloat8: return 4;
    default: return -1;
  }
}

uint32_t wider(uint32_t a, uint32_t b) { return rank(a) >= rank(b) ? a : b; }

Status unsupported(const std::string& what) {
  return Status::client("0A000", "an expression over aggregates of a read merged across shards " + what +
                                     ", which shardwire does not compute; select the aggregates themselves");
}

Status out_of_range(uint32_t type) {
  const char* name = type == oid::kInt2 ? "smallint" : type == oid::kInt4 ? "integer" : "bigint";
  return Status::client("22003", std::string(name) + " out of range");
}

Status division_by_zero() { return Status::client("22012", "division by zero"); }

bool fits(Int128 value, uint32_t type) {
  const Int128 max = type == oid::kInt2 ? INT16_MAX : type == oid::kInt4 ? INT32_MAX : INT64_MAX;
  return value <= max && value >= -max - 1;
}

uint32_t constant_type(const std::string& text) {
  int64_t value = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), value);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return oid::kNumeric;
  return fits(value, oid::kInt4) ? oid::kInt4 : oid::kInt8;
}

Result<Number> parse_number(uint32_t type, const std::string& text) {
  Number out;
  out.type = type;
  out.null = false;
  auto bad = [&] {
    return Status::server("22P02", "cannot read \"" + text.substr(0, 64) + "\" as " + type_name(type));
  };
  if (type == oid::kText) {
    out.text = text;
  } else if (is_integer(type)) {
    int64_t value = 0;
    auto r = std::from_chars(text.data(), text.data() + text.size(), value);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return bad();
    out.integer = value;
  } else if (type == oid::kNumeric) {
    auto value = Decimal::parse(text);
    if (!value) return bad();
    out.decimal = *value;
  } else {
    char* end = nullptr;
    out.real = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size()) return bad();
  }
  return out;
}

Result<Number> convert(Number value, uint32_t to) {
  if (value.null || value.type == to) {
    value.type = to;
    return value;
  }
  Number out;
  out.type = to;
  out.null = false;
  if (is_integer(to)) {
    if (is_integer(value.type)) {
      out.integer = value.integer;
    } else if (value.type == oid::kNumeric) {
      if (value.decimal.is_special())
        return Status::client("0A000", std::string("cannot convert ") +
                                           (value.decimal.is_nan() ? "NaN" : "infinity") + " to " +
                                           (to == oid::kInt2   ? "smallint"
                                            : to == oid::kInt4 ? "integer"
                                                               : "bigint"));
      const std::string text = value.decimal.round(0).text();
      if (text.size() > 21) return out_of_range(to);
      auto parsed = parse_number(oid::kInt8, text);
      if (!parsed) return out_of_range(to);
      out.integer = parsed->integer;
    } else {
      const double rounded = std::nearbyint(value.real);
      if (std::isnan(rounded) || rounded < -9223372036854775808.0 || rounded >= 9223372036854775808.0)
        return out_of_range(to);
      out.integer = static_cast<int64_t>(rounded);
    }
    if (!fits(out.integer, to)) return out_of_range(to);
  } else if (to == oid::kNumeric) {
    if (is_integer(value.type)) {
      out.decimal = Decimal::from_int(static_cast<int64_t>(value.integer));
    } else {
      char text[64];
      if (std::isnan(value.real)) {
        std::snprintf(text, sizeof text, "NaN");
      } else if (std::isinf(value.real)) {
        std::snprintf(text, sizeof text, value.real < 0 ? "-Infinity" : "Infinity");
      } else {
        std::snprintf(text, sizeof text, "%.*g", 15, value.real);
      }
      return parse_number(oid::kNumeric, text);
    }
  } else {
    out.real = is_integer(value.type) ? static_cast<double>(value.integer)
                                      : std::strtod(value.decimal.text().c_str(), nullptr);
  }
  return out;
}

Result<Number> integer_operation(Kind kind, Int128 a, Int128 b, uint32_t type) {
  Number out;
  out.type = type;
  out.null = false;
  switch (kind) {
    case Kind::Add: out.integer = a + b; break;
    case Kind::Subtract: out.integer = a - b; break;
    case Kind::Multiply: out.integer = a * b; break;
    case Kind::Modulo:
      if (b == 0) return division_by_zero();
      out.integer = b == -1 ? 0 : a % b;  // int4mod: the dividend's sign; -1 never overflows
      break;
    default:
      if (b == 0) return division_by_zero();
      out.integer = a / b;  // truncated toward zero, as C's and PostgreSQL's
  }
  if (!fits(out.integer, type)) return out_of_range(type);
  return out;
}

Result<Number> real_operation(Kind kind, double a, double b) {
  Number out;
  out.type = oid::kFloat8;
  out.null = false;
  const Status overflow = Status::client("22003", "value out of range: overflow");
  const Status underflow = Status::client("22003", "value out of range: underflow");
  if (kind == Kind::Modulo) return unsupported("takes % of double precision values");
  if (kind == Kind::Divide) {
    if (b == 0.0 && !std::isnan(a)) return division_by_zero();
    out.real = a / b;
    if (std::isinf(out.real) && !std::isinf(a)) return overflow;
    if (out.real == 0.0 && a != 0.0 && !std::isinf(b)) return underflow;
    return out;
  }
  out.real = kind == Kind::Add ? a + b : kind == Kind::Subtract ? a - b : a * b;
  if (std::isinf(out.real) && !std::isinf(a) && !std::isinf(b)) return overflow;
  if (kind == Kind::Multiply && out.real == 0.0 && a != 0.0 && b != 0.0) return underflow;
  return out;
}

Decimal absolute(const Decimal& value) {
  return value.sign() < 0 ? Decimal::from_int(0).subtract(value).with_scale(value.scale()) : value;
}

Decimal numeric_modulo(const Decimal& x, const Decimal& y) {
  const Decimal a = absolute(x);
  const Decimal b = absolute(y);
  const Decimal one = Decimal::from_int(1);
  const Decimal quotient = a.divide(b);
  Decimal whole = quotient.round(0);
  if (whole.compare(quotient) > 0) whole = whole.subtract(one);
  Decimal rest = a.subtract(whole.multiply(b));
  if (rest.sign() < 0) rest = rest.add(b);
  if (rest.compare(b) >= 0) rest = rest.subtract(b);
  rest = rest.with_scale(std::max(x.scale(), y.scale()));
  return x.sign() < 0 && rest.sign() != 0 ? Decimal::from_int(0).subtract(rest) : rest;
}

Result<Number> decimal_operation(Kind kind, const Decimal& a, const Decimal& b) {
  Number out;
  out.type = oid::kNumeric;
  out.null = false;
  if (kind == Kind::Add) {
    out.decimal = a.add(b);
    return out;
  }
  if (a.is_nan() || b.is_nan()) {
    out.decimal = *Decimal::parse("NaN");
    return out;
  }
  if (a.is_special() || b.is_special()) return unsupported("has infinity in a numeric operation");
  if (kind == Kind::Modulo) {
    if (b.sign() == 0) return division_by_zero();
    out.decimal = numeric_modulo(a, b);
    return out;
  }
  if (kind == Kind::Subtract) out.decimal = a.subtract(b);
  if (kind == Kind::Multiply) out.decimal = a.multiply(b);
  if (kind == Kind::Divide) {
    if (b.sign() == 0) return division_by_zero();
    out.decimal = a.divide(b);
  }
  return out;
}

int compare_numbers(const Number& a, const Number& b) {
  if (is_integer(a.type)) return a.integer < b.integer ? -1 : a.integer > b.integer ? 1 : 0;
  if (a.type == oid::kFloat8) {
    if (std::isnan(a.real) || std::isnan(b.real)) return std::isnan(a.real) - std::isnan(b.real);
    return a.real < b.real ? -1 : a.real > b.real ? 1 : 0;
  }
  return a.decimal.compare(b.decimal);
}

}  // namespace sw::merge::detail
