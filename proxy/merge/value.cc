#include "merge/value.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace sw::merge {
namespace {

constexpr Int128 kUsPerDay = static_cast<Int128>(86400) * 1000000;
constexpr Int128 kPlusInfinity = static_cast<Int128>(1) << 120;

Status bad_text(uint32_t type_oid, std::string_view text) {
  return Status::server("22P02", std::string("cannot read ") + type_name(type_oid) + " value \"" +
                                     std::string(text.substr(0, 64)) + "\" from a shard");
}

Status style_error(const char* setting, const char* wanted) {
  return Status::client("0A000", std::string("merging rows across shards reads dates and times only in ") +
                                     setting + " " + wanted + ": SET " + setting + " TO '" + wanted + "'");
}

bool read_int(std::string_view& s, size_t min_digits, int64_t& out) {
  size_t n = 0;
  while (n < s.size() && s[n] >= '0' && s[n] <= '9') ++n;
  if (n < min_digits || n > 18) return false;
  std::from_chars(s.data(), s.data() + n, out);
  s.remove_prefix(n);
  return true;
}

bool eat(std::string_view& s, char c) {
  if (s.empty() || s[0] != c) return false;
  s.remove_prefix(1);
  return true;
}

// Days since 1970-01-01 of a proleptic Gregorian date (astronomical year).
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool read_date(std::string_view& s, int64_t& days, bool& needs_bc) {
  int64_t y = 0, m = 0, d = 0;
  if (!read_int(s, 4, y) || !eat(s, '-') || !read_int(s, 2, m) || !eat(s, '-') || !read_int(s, 2, d))
    return false;
  needs_bc = true;
  days = days_from_civil(y, m, d);
  return true;
}

bool read_time(std::string_view& s, Int128& us) {
  int64_t h = 0, m = 0, sec = 0;
  if (!read_int(s, 2, h) || !eat(s, ':') || !read_int(s, 2, m) || !eat(s, ':') || !read_int(s, 2, sec))
    return false;
  int64_t fraction = 0;
  if (eat(s, '.')) {
    size_t n = 0;
    while (n < s.size() && s[n] >= '0' && s[n] <= '9') {
      if (n < 6) fraction = fraction * 10 + (s[n] - '0');
      ++n;
    }
    for (size_t k = n; k < 6; ++k) fraction *= 10;
    s.remove_prefix(n);
  }
  us = (static_cast<Int128>(h * 3600 + m * 60 + sec)) * 1000000 + fraction;
  return true;
}

// " BC" after a date or timestamp: astronomical year 1 - y, i.e. shift by the days of the
// year difference; recomputed from the text for exactness.
bool apply_bc(std::string_view& s, std::string_view original, Int128& value, bool is_timestamp) {
  if (s != " BC") return s.empty();
  s = {};
  std::string_view date = original;
  int64_t y = 0, m = 0, d = 0;
  read_int(date, 4, y);
  eat(date, '-');
  read_int(date, 2, m);
  eat(date, '-');
  read_int(date, 2, d);
  const Int128 ad = days_from_civil(y, m, d);
  const Int128 bc = days_from_civil(1 - y, m, d);
  value += (bc - ad) * (is_timestamp ? kUsPerDay : 1);
  return true;
}

// A time zone as the non-ISO DateStyles print it after a timestamptz: a numeric offset
// ("+05:30", "-08", tzdata's "+0545") or UTC/GMT/Z; the seconds east of UTC. Another abbreviation
// ("EST", "CET") names an offset only the time zone database knows: false.
bool read_zone(std::string_view& s, int64_t& east) {
  if (s.substr(0, 3) == "UTC" || s.substr(0, 3) == "GMT") {
    s.remove_prefix(3);
    east = 0;
    return true;
  }
  if (s.empty() || (s[0] != '+' && s[0] != '-')) return false;
  const bool west = s[0] == '-';
  s.remove_prefix(1);
  int64_t h = 0, m = 0, sec = 0;
  if (s.size() >= 4 && std::isdigit(static_cast<unsigned char>(s[2]))) {  // "+0545"
    std::string_view hours = s.substr(0, 2), minutes = s.substr(2, 2);
    if (!read_int(hours, 2, h) || !read_int(minutes, 2, m)) return false;
    s.remove_prefix(4);
  } else {
    if (!read_int(s, 2, h)) return false;
    if (eat(s, ':') && !read_int(s, 2, m)) return false;
    if (eat(s, ':') && !read_int(s, 2, sec)) return false;
  }
  east = (west ? -1 : 1) * (h * 3600 + m * 60 + sec);
  return true;
}

int month_of(std::string_view name) {
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (int i = 0; i < 12; ++i) {
    if (name == kMonths[i]) return i + 1;
  }
  return 0;
}

// Dates and timestamps as DateStyle SQL ("01/02/2024 10:00:00 UTC"), German
// ("02.01.2024 10:00:00 UTC") or Postgres ("Tue Jan 02 10:00:00 2024 UTC", dates "01-02-2024")
// print them; `day_first`: the DateStyle's order is DMY (SQL and Postgres put the day first).
Result<Value> decode_styled(uint32_t type_oid, std::string_view text, bool day_first) {
  std::string_view s = text;
  int64_t y = 0, m = 0, d = 0;
  const bool postgres_timestamp =
      type_oid != oid::kDate && s.size() > 4 && std::isalpha(static_cast<unsigned char>(s[0]));
  Int128 us = 0;
  if (postgres_timestamp) {  // "Tue Jan 02 10:00:00[.f] 2024" or "Tue 02 Jan ..."
    s.remove_prefix(4);
    if (day_first) {
      if (!read_int(s, 2, d) || !eat(s, ' ') || (m = month_of(s.substr(0, 3))) == 0)
        return bad_text(type_oid, text);
      s.remove_prefix(3);
    } else {
      if ((m = month_of(s.substr(0, 3))) == 0) return bad_text(type_oid, text);
      s.remove_prefix(3);
      if (!eat(s, ' ') || !read_int(s, 2, d)) return bad_text(type_oid, text);
    }
    if (!eat(s, ' ') || !read_time(s, us) || !eat(s, ' ') || !read_int(s, 4, y))
      return bad_text(type_oid, text);
  } else {
    int64_t first = 0, second = 0;
    char separator = 0;
    if (!read_int(s, 2, first) || s.empty()) return bad_text(type_oid, text);
    separator = s[0];
    if ((separator != '/' && separator != '.' && separator != '-') || !eat(s, separator) ||
        !read_int(s, 2, second) || !eat(s, separator) || !read_int(s, 4, y))
      return bad_text(type_oid, text);
    const bool dmy = separator == '.' || day_first;  // German is always day first
    d = dmy ? first : second;
    m = dmy ? second : first;
    if (type_oid != oid::kDate && (!eat(s, ' ') || !read_time(s, us))) return bad_text(type_oid, text);
  }
  int64_t east = 0;
  if (type_oid == oid::kTimestamptz) {
    if (!eat(s, ' ')) return bad_text(type_oid, text);
    if (!read_zone(s, east)) {
      return Status::client("0A000",
                            "merging rows across shards reads a timestamptz in DateStyle " +
                                std::string(postgres_timestamp ? "Postgres" : "SQL or German") +
                                " only with a numeric time zone or UTC, not \"" +
                                std::string(s.substr(0, s.find(' '))) +
                                "\": SET DateStyle TO 'ISO', or TimeZone TO a numeric offset, instead");
    }
  }
  const bool bc = s == " BC";
  if (!bc && !s.empty()) return bad_text(type_oid, text);
  Int128 value = days_from_civil(bc ? 1 - y : y, m, d);
  if (type_oid == oid::kDate) return Value{value};
  value = value * kUsPerDay + us - static_cast<Int128>(east) * 1000000;
  return Value{value};
}

Result<Value> decode_datetime(uint32_t type_oid, std::string_view text, bool day_first) {
  if (text == "infinity") return Value{kPlusInfinity};
  if (text == "-infinity") return Value{-kPlusInfinity};
  std::string_view s = text;
  if (type_oid == oid::kTime) {
    Int128 us = 0;
    if (!read_time(s, us) || !s.empty()) return bad_text(type_oid, text);
    return Value{us};
  }
  int64_t days = 0;
  bool unused = false;
  if (!read_date(s, days, unused)) return decode_styled(type_oid, text, day_first);
  Int128 value = days;
  if (type_oid == oid::kDate) {
    if (!apply_bc(s, text, value, false)) return bad_text(type_oid, text);
    return Value{value};
  }
  Int128 us = 0;
  if (!eat(s, ' ') || !read_time(s, us)) return bad_text(type_oid, text);
  value = value * kUsPerDay + us;
  if (type_oid == oid::kTimestamptz) {
    if (s.empty() || (s[0] != '+' && s[0] != '-')) return bad_text(type_oid, text);
    const bool west = s[0] == '-';
    s.remove_prefix(1);
    int64_t h = 0, m = 0, sec = 0;
    if (!read_int(s, 2, h)) return bad_text(type_oid, text);
    if (eat(s, ':') && !read_int(s, 2, m)) return bad_text(type_oid, text);
    if (eat(s, ':') && !read_int(s, 2, sec)) return bad_text(type_oid, text);
    const Int128 offset = static_cast<Int128>(h * 3600 + m * 60 + sec) * 1000000;
    value += west ? offset : -offset;  // to UTC
  }
  if (!apply_bc(s, text, value, true)) return bad_text(type_oid, text);
  return Value{value};
}

}  // namespace

// IntervalStyle postgres: "1 year 2 mons -3 days +04:05:06.5".
Result<IntervalParts> decode_interval_parts(std::string_view text) {
  std::string_view s = text;
  Int128 months = 0, days = 0, us = 0;
  while (!s.empty()) {
    while (eat(s, ' ')) {}
    if (s.empty()) break;
    const bool negative = s[0] == '-';
    std::string_view token = s;
    if (s[0] == '-' || s[0] == '+') s.remove_prefix(1);
    if (s.find(':') < s.find(' ')) {
      Int128 t = 0;
      if (!read_time(s, t)) return bad_text(oid::kInterval, text);
      us += negative ? -t : t;
      continue;
    }
    int64_t n = 0;
    if (!read_int(s, 1, n) || !eat(s, ' ')) {
      return token.find('@') != std::string_view::npos || token.find('P') != std::string_view::npos
                 ? style_error("IntervalStyle", "postgres")
                 : bad_text(oid::kInterval, text);
    }
    const Int128 v = negative ? -n : n;
    size_t end = s.find(' ');
    std::string_view unit = s.substr(0, end);
    s.remove_prefix(end == std::string_view::npos ? s.size() : end);
    if (unit == "year" || unit == "years") {
      months += v * 12;
    } else if (unit == "mon" || unit == "mons") {
      months += v;
    } else if (unit == "day" || unit == "days") {
      days += v;
    } else {
      return bad_text(oid::kInterval, text);
    }
  }
  return IntervalParts{static_cast<int64_t>(months), static_cast<int64_t>(days), static_cast<int64_t>(us)};
}

namespace {

// Compared as PostgreSQL's interval_cmp_value: months of 30 days, days of 24 hours.
Result<Value> decode_interval(std::string_view text) {
  auto parts = decode_interval_parts(text);
  if (!parts) return parts.status();
  const Int128 days = static_cast<Int128>(parts->days) + static_cast<Int128>(parts->months) * 30;
  return Value{static_cast<Int128>(parts->microseconds) + days * kUsPerDay};
}

}  // namespace

bool byte_order_collation(std::string_view collation) {
  std::string lower;
  for (char c : collation) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return lower == "c" || lower == "posix" || lower == "c.utf8" || lower == "c.utf-8";
}

bool is_collatable_type(uint32_t type_oid) {
  return type_oid == oid::kText || type_oid == oid::kVarchar || type_oid == oid::kBpchar ||
         type_oid == oid::kName;
}

bool is_comparable_type(uint32_t type_oid) {
  switch (type_oid) {
    case oid::kBool:
    case oid::kBytea:
    case oid::kName:
    case oid::kInt8:
    case oid::kInt2:
    case oid::kInt4:
    case oid::kText:
    case oid::kOid:
    case oid::kFloat4:
    case oid::kFloat8:
    case oid::kBpchar:
    case oid::kVarchar:
    case oid::kDate:
    case oid::kTime:
    case oid::kTimestamp:
    case oid::kTimestamptz:
    case oid::kInterval:
    case oid::kNumeric:
    case oid::kUuid: return true;
    default: return false;
  }
}

const char* type_name(uint32_t type_oid) {
  switch (type_oid) {
    case oid::kBool: return "boolean";
    case oid::kBytea: return "bytea";
    case oid::kName: return "name";
    case oid::kInt8: return "bigint";
    case oid::kInt2: return "smallint";
    case oid::kInt4: return "integer";
    case oid::kText: return "text";
    case oid::kOid: return "oid";
    case oid::kFloat4: return "real";
    case oid::kFloat8: return "double precision";
    case oid::kBpchar: return "character";
    case oid::kVarchar: return "character varying";
    case oid::kDate: return "date";
    case oid::kTime: return "time";
    case oid::kTimestamp: return "timestamp";
    case oid::kTimestamptz: return "timestamptz";
    case oid::kInterval: return "interval";
    case oid::kNumeric: return "numeric";
    case oid::kUuid: return "uuid";
    default: return "this type";
  }
}

int Value::compare(const Value& other) const {
  if (v.index() != other.v.index()) return v.index() < other.v.index() ? -1 : 1;
  switch (v.index()) {
    case 0: {
      auto a = std::get<0>(v), b = std::get<0>(other.v);
      return a < b ? -1 : (a > b ? 1 : 0);
    }
    case 1: {
      double a = std::get<1>(v), b = std::get<1>(other.v);
      if (std::isnan(a) || std::isnan(b))
        return std::isnan(a) == std::isnan(b) ? 0 : (std::isnan(a) ? 1 : -1);
      return a < b ? -1 : (a > b ? 1 : 0);
    }
    case 2: return std::get<2>(v).compare(std::get<2>(other.v));
    default: {
      int c = std::get<3>(v).compare(std::get<3>(other.v));
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
  }
}

std::string Value::canonical() const {
  switch (v.index()) {
    case 0: {
      auto x = std::get<0>(v);
      return std::to_string(static_cast<long long>(x >> 64)) + ":" +
             std::to_string(static_cast<unsigned long long>(x));
    }
    case 1: {
      double d = std::get<1>(v);
      if (std::isnan(d)) return "NaN";
      if (d == 0) d = 0;  // -0 = 0
      char buf[64];
      auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::hex);
      return std::string(buf, r.ptr);
    }
    case 2: return std::get<2>(v).canonical();
    default: return std::get<3>(v);
  }
}

Result<Value> decode_text(uint32_t type_oid, std::string_view text, bool day_first) {
  switch (type_oid) {
    case oid::kInt2:
    case oid::kInt4:
    case oid::kInt8:
    case oid::kOid: {
      int64_t n = 0;
      auto r = std::from_chars(text.data(), text.data() + text.size(), n);
      if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return bad_text(type_oid, text);
      return Value{static_cast<Int128>(n)};
    }
    case oid::kBool:
      if (text == "t" || text == "f") return Value{static_cast<Int128>(text == "t" ? 1 : 0)};
      return bad_text(type_oid, text);
    case oid::kFloat4:
    case oid::kFloat8: {
      std::string copy(text);
      char* end = nullptr;
      double d = std::strtod(copy.c_str(), &end);
      if (end != copy.c_str() + copy.size()) return bad_text(type_oid, text);
      return Value{d};
    }
    case oid::kNumeric: {
      auto d = Decimal::parse(text);
      if (!d) return bad_text(type_oid, text);
      return Value{*d};
    }
    case oid::kBpchar: {
      size_t end = text.find_last_not_of(' ');
      return Value{std::string(text.substr(0, end == std::string_view::npos ? 0 : end + 1))};
    }
    case oid::kBytea:
      if (text.substr(0, 2) != "\\x") return style_error("bytea_output", "hex");
      return Value{std::string(text.substr(2))};
    case oid::kText:
    case oid::kVarchar:
    case oid::kName:
    case oid::kUuid: return Value{std::string(text)};
    case oid::kDate:
    case oid::kTime:
    case oid::kTimestamp:
    case oid::kTimestamptz: return decode_datetime(type_oid, text, day_first);
    case oid::kInterval: return decode_interval(text);
    default:
      return Status::client("0A000", std::string("shardwire cannot compare values of type OID ") +
                                         std::to_string(type_oid) + " across shards");
  }
}

namespace {

// Shortest round-trip digits and decimal exponent, printed as PostgreSQL's ryu-based output:
// fixed notation for exponents in [-4, fixed_below), else d.ddde+XX.
std::string format_shortest(const char* begin, const char* end, int fixed_below) {
  std::string_view sci(begin, static_cast<size_t>(end - begin));
  std::string sign;
  if (!sci.empty() && sci[0] == '-') {
    sign = "-";
    sci.remove_prefix(1);
  }
  size_t e = sci.find('e');
  std::string mantissa(sci.substr(0, e));
  int exponent = std::atoi(std::string(sci.substr(e + 1)).c_str());
  std::string digits;
  for (char c : mantissa) {
    if (c != '.') digits.push_back(c);
  }
  if (exponent >= -4 && exponent < fixed_below) {
    std::string out;
    if (exponent < 0) {
      out = "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    } else if (static_cast<int>(digits.size()) <= exponent + 1) {
      out = digits + std::string(static_cast<size_t>(exponent) + 1 - digits.size(), '0');
    } else {
      const size_t point = static_cast<size_t>(exponent) + 1;
      out = digits.substr(0, point);
      out += '.';
      out += digits.substr(point);
    }
    return sign + out;
  }
  std::string out = digits.substr(0, 1);
  if (digits.size() > 1) {
    out += '.';
    out.append(digits, 1);
  }
  char exp_text[16];
  std::snprintf(exp_text, sizeof exp_text, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  return sign + out + exp_text;
}

}  // namespace

std::string format_float8(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  if (value == 0) return std::signbit(value) ? "-0" : "0";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  return format_shortest(buf, r.ptr, 15);
}

std::string format_float4(float value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  if (value == 0) return std::signbit(value) ? "-0" : "0";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  return format_shortest(buf, r.ptr, 6);
}

bool day_first(std::string_view date_style) {
  for (size_t i = 0; i + 3 <= date_style.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(date_style[i])) == 'D' &&
        std::toupper(static_cast<unsigned char>(date_style[i + 1])) == 'M' &&
        std::toupper(static_cast<unsigned char>(date_style[i + 2])) == 'Y')
      return true;
  }
  return false;
}

}  // namespace sw::merge
