#include "merge/parameter.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>

#include "merge/value.h"

namespace sw::merge {
namespace {

uint64_t read_be(std::string_view bytes, size_t at, size_t size) {
  uint64_t out = 0;
  for (size_t i = 0; i < size; ++i) out = (out << 8) | static_cast<unsigned char>(bytes[at + i]);
  return out;
}

int64_t read_signed(std::string_view bytes, size_t at, size_t size) {
  const uint64_t raw = read_be(bytes, at, size);
  const uint64_t sign = uint64_t{1} << (size * 8 - 1);
  return size == 8 ? static_cast<int64_t>(raw)
                   : static_cast<int64_t>(raw ^ sign) - static_cast<int64_t>(sign);
}

Status malformed(uint32_t type_oid) {
  return Status::client(
      "22P03", std::string("a binary ") + type_name(type_oid) + " parameter has the wrong length or shape");
}

std::string four_digits(int64_t digit) {
  std::string out = std::to_string(digit);
  return std::string(4 - std::min<size_t>(out.size(), 4), '0') + out;
}

// numeric_send: ndigits, weight, sign, dscale (int16 each), then base-10000 digits.
Result<std::string> numeric_text(std::string_view bytes) {
  if (bytes.size() < 8) return malformed(oid::kNumeric);
  const auto ndigits = static_cast<size_t>(read_be(bytes, 0, 2));
  const int64_t weight = read_signed(bytes, 2, 2);
  const uint64_t sign = read_be(bytes, 4, 2);
  const int64_t dscale = read_signed(bytes, 6, 2);
  if (bytes.size() != 8 + 2 * ndigits || dscale < 0 || ndigits > 10000) return malformed(oid::kNumeric);
  if (sign == 0xC000) return std::string("NaN");
  if (sign == 0xD000) return std::string("Infinity");
  if (sign == 0xF000) return std::string("-Infinity");
  if (sign != 0 && sign != 0x4000) return malformed(oid::kNumeric);
  auto digit = [&](int64_t index) -> int64_t {
    if (index < 0 || static_cast<size_t>(index) >= ndigits) return 0;
    const int64_t d = read_signed(bytes, 8 + 2 * static_cast<size_t>(index), 2);
    return d >= 0 && d < 10000 ? d : -1;
  };
  std::string out = sign == 0x4000 ? "-" : "";
  if (weight < 0) {
    out += '0';
  } else {
    for (int64_t i = 0; i <= weight; ++i) {
      if (digit(i) < 0) return malformed(oid::kNumeric);
      out += i == 0 ? std::to_string(digit(i)) : four_digits(digit(i));
    }
  }
  if (dscale > 0) {
    std::string fraction;
    for (int64_t j = 1; static_cast<int64_t>(fraction.size()) < dscale; ++j) {
      if (digit(j + weight) < 0) return malformed(oid::kNumeric);
      fraction += four_digits(digit(j + weight));
    }
    out += '.' + fraction.substr(0, static_cast<size_t>(dscale));
  }
  return out;
}

}  // namespace

std::optional<std::vector<BindParameter>> decode_bind_parameters(std::string_view blob,
                                                                 const std::vector<uint32_t>& types) {
  if (blob.size() < 2) return std::nullopt;
  const auto formats = static_cast<size_t>(read_be(blob, 0, 2));
  size_t at = 2 + 2 * formats;
  if (at + 2 > blob.size()) return std::nullopt;
  const auto count = static_cast<size_t>(read_be(blob, at, 2));
  at += 2;
  if (formats > 1 && formats != count) return std::nullopt;
  std::vector<BindParameter> out;
  for (size_t i = 0; i < count; ++i) {
    if (at + 4 > blob.size()) return std::nullopt;
    BindParameter parameter;
    parameter.format = formats == 0 ? 0 : static_cast<int>(read_be(blob, 2 + 2 * (formats == 1 ? 0 : i), 2));
    parameter.type = i < types.size() ? types[i] : 0;
    const int64_t length = read_signed(blob, at, 4);
    at += 4;
    if (length >= 0) {
      if (at + static_cast<size_t>(length) > blob.size()) return std::nullopt;
      parameter.value = std::string(blob.substr(at, static_cast<size_t>(length)));
      at += static_cast<size_t>(length);
    }
    out.push_back(std::move(parameter));
  }
  return out;
}

Result<std::string> binary_to_text(uint32_t type_oid, std::string_view bytes) {
  auto integer = [&](size_t size) -> Result<std::string> {
    if (bytes.size() != size) return malformed(type_oid);
    return std::to_string(read_signed(bytes, 0, size));
  };
  switch (type_oid) {
    case oid::kInt2: return integer(2);
    case oid::kInt4: return integer(4);
    case oid::kInt8: return integer(8);
    case oid::kOid:
      if (bytes.size() != 4) return malformed(type_oid);
      return std::to_string(read_be(bytes, 0, 4));
    case oid::kBool:
      if (bytes.size() != 1) return malformed(type_oid);
      return std::string(bytes[0] != 0 ? "t" : "f");
    case oid::kFloat4: {
      if (bytes.size() != 4) return malformed(type_oid);
      const auto bits = static_cast<uint32_t>(read_be(bytes, 0, 4));
      float value = 0;
      std::memcpy(&value, &bits, sizeof value);
      return format_float4(value);
    }
    case oid::kFloat8: {
      if (bytes.size() != 8) return malformed(type_oid);
      const uint64_t bits = read_be(bytes, 0, 8);
      double value = 0;
      std::memcpy(&value, &bits, sizeof value);
      return format_float8(value);
    }
    case oid::kNumeric: return numeric_text(bytes);
    default: break;
  }
  if (is_collatable_type(type_oid)) return std::string(bytes);
  return Status::client("0A000",
                        std::string("a HAVING parameter of type ") + type_name(type_oid) +
                            " in binary format is not read by shardwire's merge; send it in text format");
}

Result<int64_t> count_parameter(const std::vector<BindParameter>& parameters, int number, bool limit) {
  if (number < 1 || static_cast<size_t>(number) > parameters.size())
    return Status::client("08P01", "bind message supplies " + std::to_string(parameters.size()) +
                                       " parameters, but the statement uses $" + std::to_string(number));
  const BindParameter& parameter = parameters[static_cast<size_t>(number - 1)];
  if (!parameter.value) return limit ? -1 : 0;
  std::string text = *parameter.value;
  if (parameter.format == 1) {
    auto printed = binary_to_text(parameter.type == 0 ? 20 : parameter.type, text);  // bigint by default
    if (!printed) return printed.status();
    text = std::move(printed.value());
  }
  size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  if (begin < end && text[begin] == '+') ++begin;
  int64_t value = 0;
  auto read = std::from_chars(text.data() + begin, text.data() + end, value);
  if (read.ec == std::errc::result_out_of_range)
    return Status::client("22003", "value is out of range for type bigint");
  if (read.ec != std::errc() || read.ptr != text.data() + end || begin == end)
    return Status::client("22P02", "invalid input syntax for type bigint");
  if (value < 0)
    return limit ? Status::client("2201W", "LIMIT must not be negative")
                 : Status::client("2201X", "OFFSET must not be negative");
  return value;
}

}  // namespace sw::merge
