#include "auth/base64.h"

#include <cstdint>

namespace sw::auth {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Six-bit value of a base64 character, or -1 for anything else (including '=').
int sextet(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

uint32_t byte_at(std::string_view data, size_t i) { return static_cast<unsigned char>(data[i]); }

}  // namespace

std::string base64_encode(std::string_view data) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= data.size(); i += 3) {
    uint32_t v = (byte_at(data, i) << 16) | (byte_at(data, i + 1) << 8) | byte_at(data, i + 2);
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(kAlphabet[(v >> 6) & 63]);
    out.push_back(kAlphabet[v & 63]);
  }
  size_t rest = data.size() - i;
  if (rest == 1) {
    uint32_t v = byte_at(data, i) << 16;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.append("==");
  } else if (rest == 2) {
    uint32_t v = (byte_at(data, i) << 16) | (byte_at(data, i + 1) << 8);
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(kAlphabet[(v >> 6) & 63]);
    out.push_back('=');
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    int padding = 0;
    if (i + 4 == text.size() && text[i + 3] == '=') padding = text[i + 2] == '=' ? 2 : 1;
    uint32_t v = 0;
    for (int j = 0; j < 4; ++j) {
      int s = 0;
      if (j < 4 - padding) {
        s = sextet(text[i + j]);
        if (s < 0) return std::nullopt;
      }
      v = (v << 6) | static_cast<uint32_t>(s);
    }
    // Bits that padding makes unused must be zero, so every byte string has one encoding.
    if (padding == 2 && (v & 0xFFFF) != 0) return std::nullopt;
    if (padding == 1 && (v & 0xFF) != 0) return std::nullopt;
    out.push_back(static_cast<char>(v >> 16));
    if (padding < 2) out.push_back(static_cast<char>(v >> 8));
    if (padding < 1) out.push_back(static_cast<char>(v));
  }
  return out;
}

}  // namespace sw::auth
