// A binary-format array parameter decoded into its elements' text and encoded back.
#include "router/binary_array.h"

#include <charconv>

#include "common/bytes.h"

namespace sw::router {
namespace {

constexpr uint32_t kInt8 = 20, kInt2 = 21, kInt4 = 23, kText = 25, kName = 19, kBpchar = 1042,
                   kVarchar = 1043, kUuid = 2950;

uint32_t be32(std::string_view b, size_t at) { return load_be32(b.data() + at); }

// `v`'s low `bytes` bytes (2, 4 or 8), most significant first.
void put_be(std::string& out, uint64_t v, size_t bytes) {
  if (bytes == 8) append_be32(out, static_cast<uint32_t>(v >> 32));
  if (bytes == 2) {
    append_be16(out, static_cast<uint16_t>(v));
  } else {
    append_be32(out, static_cast<uint32_t>(v));
  }
}

bool text_type(uint32_t type) {
  return type == kText || type == kName || type == kBpchar || type == kVarchar;
}

size_t int_width(uint32_t type) {
  switch (type) {
    case kInt2: return 2;
    case kInt4: return 4;
    case kInt8: return 8;
    default: return 0;
  }
}

std::optional<std::string> element_text(uint32_t type, std::string_view raw) {
  if (text_type(type)) return std::string(raw);
  if (const size_t width = int_width(type); width != 0) {
    if (raw.size() != width) return std::nullopt;
    uint64_t v = 0;
    for (char c : raw) v = (v << 8) | static_cast<unsigned char>(c);
    int64_t value = 0;  // sign-extended from its width
    if (width == 2) value = static_cast<int16_t>(v);
    if (width == 4) value = static_cast<int32_t>(v);
    if (width == 8) value = static_cast<int64_t>(v);
    return std::to_string(value);
  }
  if (type == kUuid) {
    if (raw.size() != 16) return std::nullopt;
    static const char* const kHex = "0123456789abcdef";
    std::string out;
    for (size_t i = 0; i < 16; ++i) {
      if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
      out += kHex[static_cast<unsigned char>(raw[i]) >> 4];
      out += kHex[static_cast<unsigned char>(raw[i]) & 0xf];
    }
    return out;
  }
  return std::nullopt;
}

std::optional<std::string> element_binary(uint32_t type, const std::string& text) {
  if (text_type(type)) return text;
  if (const size_t width = int_width(type); width != 0) {
    int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
    std::string out;
    put_be(out, static_cast<uint64_t>(value), width);
    return out;
  }
  if (type == kUuid) {
    std::string out;
    int high = -1;
    for (char c : text) {
      if (c == '-') continue;
      const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (digit < 0) return std::nullopt;
      if (high < 0) {
        high = digit;
      } else {
        out.push_back(static_cast<char>((high << 4) | digit));
        high = -1;
      }
    }
    if (out.size() != 16 || high >= 0) return std::nullopt;
    return out;
  }
  return std::nullopt;
}

}  // namespace

std::optional<BinaryArray> decode_binary_array(std::string_view bytes) {
  if (bytes.size() < 12) return std::nullopt;
  const uint32_t dimensions = be32(bytes, 0);
  BinaryArray array;
  array.element_type = be32(bytes, 8);
  if (!text_type(array.element_type) && int_width(array.element_type) == 0 && array.element_type != kUuid)
    return std::nullopt;
  if (dimensions == 0) return bytes.size() == 12 ? std::optional<BinaryArray>(array) : std::nullopt;
  if (dimensions != 1 || bytes.size() < 20) return std::nullopt;
  const uint32_t count = be32(bytes, 12);
  array.lower_bound = static_cast<int32_t>(be32(bytes, 16));
  size_t at = 20;
  for (uint32_t i = 0; i < count; ++i) {
    if (at + 4 > bytes.size()) return std::nullopt;
    const auto length = static_cast<int32_t>(be32(bytes, at));
    at += 4;
    if (length < 0) {
      array.elements.emplace_back(std::nullopt);
      continue;
    }
    if (static_cast<size_t>(length) > bytes.size() - at) return std::nullopt;
    auto text = element_text(array.element_type, bytes.substr(at, static_cast<size_t>(length)));
    if (!text) return std::nullopt;
    array.elements.emplace_back(std::move(text));
    at += static_cast<size_t>(length);
  }
  if (at != bytes.size()) return std::nullopt;
  return array;
}

std::optional<std::string> encode_binary_array(const BinaryArray& like,
                                               const std::vector<std::optional<std::string>>& elements) {
  std::string out;
  bool nulls = false;
  for (const auto& element : elements) nulls = nulls || !element;
  append_be32(out, elements.empty() ? 0 : 1);
  append_be32(out, nulls ? 1 : 0);
  append_be32(out, like.element_type);
  if (elements.empty()) return out;
  append_be32(out, static_cast<uint32_t>(elements.size()));
  append_be32(out, static_cast<uint32_t>(like.lower_bound));
  for (const auto& element : elements) {
    if (!element) {
      append_be32(out, 0xffffffffu);
      continue;
    }
    auto raw = element_binary(like.element_type, *element);
    if (!raw) return std::nullopt;
    append_be32(out, static_cast<uint32_t>(raw->size()));
    out += *raw;
  }
  return out;
}

}  // namespace sw::router
