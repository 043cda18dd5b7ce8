#include "auth/saslprep.h"

#include <cstdint>
#include <optional>
#include <vector>

#include "auth/nfkc.h"
#include "common/utf8.h"

namespace sw::auth {
namespace {

struct Range {
  uint32_t first;
  uint32_t last;
};

template <size_t N>
bool in_table(uint32_t cp, const Range (&table)[N]) {
  for (const Range& r : table) {
    if (cp >= r.first && cp <= r.last) return true;
  }
  return false;
}

// RFC 3454 C.1.2, non-ASCII space characters: mapped to U+0020 (RFC 4013 2.1).
constexpr Range kNonAsciiSpace[] = {
    {0x00A0, 0x00A0}, {0x1680, 0x1680}, {0x2000, 0x200B},
    {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000},
};

// RFC 3454 B.1, commonly mapped to nothing.
constexpr Range kMappedToNothing[] = {
    {0x00AD, 0x00AD}, {0x034F, 0x034F}, {0x1806, 0x1806}, {0x180B, 0x180D},
    {0x200B, 0x200D}, {0x2060, 0x2060}, {0xFE00, 0xFE0F}, {0xFEFF, 0xFEFF},
};

// RFC 4013 2.3 prohibited output: RFC 3454 C.1.2, C.2.1, C.2.2, C.3, C.5, C.6, C.7, C.8, C.9.
// C.4 (non-characters) is checked separately in is_prohibited().
constexpr Range kProhibited[] = {
    {0x0000, 0x001F},   {0x007F, 0x00A0},  // C.2.1, C.2.2, C.1.2
    {0x0340, 0x0341},                      // C.8
    {0x06DD, 0x06DD},   {0x070F, 0x070F},     {0x1680, 0x1680},
    {0x180E, 0x180E},   {0x2000, 0x200F},  // C.1.2, C.2.2, C.8
    {0x2028, 0x202F},                      // C.2.2, C.8, C.1.2
    {0x205F, 0x2063},   {0x206A, 0x206F},     {0x2FF0, 0x2FFB},
    {0x3000, 0x3000},   {0xD800, 0xF8FF},      // C.5 surrogates, C.3 private use
    {0xFEFF, 0xFEFF},   {0xFFF9, 0xFFFD},      // C.2.2, C.6
    {0x1D173, 0x1D17A},                        // C.2.2
    {0xE0001, 0xE0001}, {0xE0020, 0xE007F},    // C.9
    {0xF0000, 0xFFFFD}, {0x100000, 0x10FFFD},  // C.3
};

bool is_prohibited(uint32_t cp) {
  if (in_table(cp, kProhibited)) return true;
  // C.4: U+FDD0..U+FDEF and the last two code points of every plane.
  return (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE;
}

// Strict UTF-8 decoding (no overlong forms, no surrogates, nothing above U+10FFFF).
std::optional<std::vector<uint32_t>> decode_utf8(std::string_view s) {
  std::vector<uint32_t> out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    auto b0 = static_cast<unsigned char>(s[i]);
    size_t len;
    uint32_t cp;
    uint32_t min;
    if (b0 < 0x80) {
      len = 1, cp = b0, min = 0;
    } else if ((b0 & 0xE0) == 0xC0) {
      len = 2, cp = b0 & 0x1F, min = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
      len = 3, cp = b0 & 0x0F, min = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
      len = 4, cp = b0 & 0x07, min = 0x10000;
    } else {
      return std::nullopt;
    }
    if (s.size() - i < len) return std::nullopt;
    for (size_t k = 1; k < len; ++k) {
      auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) return std::nullopt;
      cp = (cp << 6) | (b & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return std::nullopt;
    out.push_back(cp);
    i += len;
  }
  return out;
}

}  // namespace

std::string saslprep_password(std::string_view password) {
  bool ascii = true;
  for (char c : password) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii) return std::string(password);

  auto decoded = decode_utf8(password);
  if (!decoded) return std::string(password);

  // Step 1, map.
  std::vector<uint32_t> mapped;
  mapped.reserve(decoded->size());
  for (uint32_t cp : *decoded) {
    if (in_table(cp, kNonAsciiSpace)) {
      mapped.push_back(0x20);
    } else if (!in_table(cp, kMappedToNothing)) {
      mapped.push_back(cp);
    }
  }
  if (mapped.empty()) return std::string(password);
  // Step 3, prohibit. PostgreSQL (pg_saslprep) checks the mapped string, not the normalized one.
  for (uint32_t cp : mapped) {
    if (is_prohibited(cp)) return std::string(password);
  }

  // Step 2, normalize: the normalized string is the result.
  std::string out;
  out.reserve(password.size());
  for (uint32_t cp : nfkc(mapped)) append_utf8(out, cp);
  return out;
}

}  // namespace sw::auth
