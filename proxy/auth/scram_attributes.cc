#include "auth/scram_internal.h"

namespace sw::auth::detail {

bool is_printable_nonce(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < 0x21 || c > 0x7E || c == ',') return false;
  }
  return true;
}

std::optional<uint64_t> parse_posit_number(std::string_view s, uint64_t limit) {
  if (s.empty() || s[0] < '1' || s[0] > '9') return std::nullopt;
  uint64_t value = 0;
  bool over = false;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    if (!over) {
      value = value * 10 + static_cast<uint64_t>(c - '0');
      over = value > limit;  // limit is far below UINT64_MAX / 10 in every use
    }
  }
  return over ? limit + 1 : value;
}

std::optional<std::pair<char, std::string_view>> AttributeReader::next() {
  if (pos_ + 2 > message_.size()) return std::nullopt;
  char name = message_[pos_];
  bool alpha = (name >= 'a' && name <= 'z') || (name >= 'A' && name <= 'Z');
  if (!alpha || message_[pos_ + 1] != '=') return std::nullopt;
  size_t start = pos_ + 2;
  size_t end = message_.find(',', start);
  if (end == std::string_view::npos) end = message_.size();
  std::string_view value = message_.substr(start, end - start);
  dangling_comma_ = end < message_.size() && end + 1 == message_.size();
  pos_ = end < message_.size() ? end + 1 : end;
  return std::make_pair(name, value);
}

std::optional<std::string_view> AttributeReader::expect(char name) {
  if (pos_ >= message_.size() || message_[pos_] != name) return std::nullopt;
  auto attr = next();
  if (!attr) return std::nullopt;
  return attr->second;
}

}  // namespace sw::auth::detail
