// parse_duration and the byte-size parser share one contract: an unsigned integer, optional
// spaces, an optional unit; overflow and anything else throw std::invalid_argument.
#include <cctype>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

#include "config/config.h"

namespace sw::config {
namespace {

struct NumberAndUnit {
  uint64_t number = 0;
  std::string_view unit;  // trailing text after optional spaces; empty when absent
};

// Splits "  250 ms " into 250 and "ms". Throws on a missing number, a sign, a fraction or
// overflow of uint64_t.
NumberAndUnit split_number(std::string_view text, const char* what) {
  size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  size_t end = text.size();
  while (end > i && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  text = text.substr(i, end - i);
  if (text.empty()) throw std::invalid_argument(std::string(what) + " is empty");

  NumberAndUnit out;
  size_t pos = 0;
  for (; pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])); ++pos) {
    uint64_t digit = static_cast<uint64_t>(text[pos] - '0');
    if (out.number > (std::numeric_limits<uint64_t>::max() - digit) / 10) {
      throw std::invalid_argument(std::string(what) + " is too large");
    }
    out.number = out.number * 10 + digit;
  }
  if (pos == 0) throw std::invalid_argument(std::string(what) + " must start with a whole number");
  while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  out.unit = text.substr(pos);
  return out;
}

uint64_t checked_multiply(uint64_t a, uint64_t b, uint64_t limit, const char* what) {
  if (b != 0 && a > limit / b) throw std::invalid_argument(std::string(what) + " is too large");
  return a * b;
}

}  // namespace

Duration parse_duration(const std::string& text) {
  NumberAndUnit parsed = split_number(text, "duration");
  uint64_t factor_ms = 0;
  if (parsed.unit.empty() || parsed.unit == "s") {
    factor_ms = 1000;  // a bare number is seconds
  } else if (parsed.unit == "ms") {
    factor_ms = 1;
  } else if (parsed.unit == "m" || parsed.unit == "min") {
    factor_ms = 60'000;
  } else if (parsed.unit == "h") {
    factor_ms = 3'600'000;
  } else if (parsed.unit == "d") {
    factor_ms = 86'400'000;
  } else {
    throw std::invalid_argument("duration unit must be ms, s, m, h or d");
  }
  const auto limit = static_cast<uint64_t>(std::numeric_limits<Duration::rep>::max());
  return Duration(static_cast<Duration::rep>(checked_multiply(parsed.number, factor_ms, limit, "duration")));
}

uint64_t parse_byte_size(const std::string& text) {
  NumberAndUnit parsed = split_number(text, "size");
  // Powers of 1024, as PostgreSQL reads memory settings ("256MB" = 256 MiB).
  std::string unit;
  for (char c : parsed.unit) unit.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  uint64_t factor = 0;
  if (unit.empty() || unit == "B") {
    factor = 1;
  } else if (unit == "KB" || unit == "KIB" || unit == "K") {
    factor = 1ull << 10;
  } else if (unit == "MB" || unit == "MIB" || unit == "M") {
    factor = 1ull << 20;
  } else if (unit == "GB" || unit == "GIB" || unit == "G") {
    factor = 1ull << 30;
  } else if (unit == "TB" || unit == "TIB" || unit == "T") {
    factor = 1ull << 40;
  } else {
    throw std::invalid_argument("size unit must be B, kB, MB, GB or TB");
  }
  return checked_multiply(parsed.number, factor, std::numeric_limits<uint64_t>::max(), "size");
}

}  // namespace sw::config
