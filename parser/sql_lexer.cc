#include "parser/sql_lexer.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>

namespace sw::parser::detail {
namespace {

constexpr char kMarker = '\x01';

// Byte classes, one table lookup per byte on the scan's hot path (every byte of every text the
// normalized cache sees).
constexpr uint8_t kIdentStart = 1;
constexpr uint8_t kIdentCont = 2;
constexpr uint8_t kDigit = 4;
constexpr auto kClasses = [] {
  std::array<uint8_t, 256> classes{};
  for (int u = 0; u < 256; ++u) {
    const bool start = (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || u == '_' || u >= 0x80;
    const bool digit = u >= '0' && u <= '9';
    classes[static_cast<size_t>(u)] = static_cast<uint8_t>((start ? kIdentStart : 0) | (digit ? kDigit : 0) |
                                                           (start || digit || u == '$' ? kIdentCont : 0));
  }
  return classes;
}();
bool has_class(char c, uint8_t bits) { return (kClasses[static_cast<unsigned char>(c)] & bits) != 0; }

// What the scan's main loop does at a byte: one table lookup, then one branch for the common
// bytes (words, spaces and operators) instead of a compare per special byte.
enum class Lead : uint8_t { Skip, Word, Other };
constexpr auto kLeads = [] {
  std::array<Lead, 256> leads{};
  for (int u = 0; u < 256; ++u) {
    const bool start = (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || u == '_' || u >= 0x80;
    leads[static_cast<size_t>(u)] = start ? Lead::Word : (u >= '0' && u <= '9') ? Lead::Other : Lead::Skip;
  }
  for (char c : {kMarker, '-', '/', '\'', '"', '$', '.', '(', ')', '[', ']', ','})
    leads[static_cast<unsigned char>(c)] = Lead::Other;
  return leads;
}();
Lead lead_of(char c) { return kLeads[static_cast<unsigned char>(c)]; }

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_digit(char c) { return has_class(c, kDigit); }
bool is_ident_start(char c) { return has_class(c, kIdentStart); }
bool is_ident_cont(char c) { return has_class(c, kIdentCont); }

class Scanner {
 public:
  explicit Scanner(std::string_view sql, std::vector<SqlToken>* tokens = nullptr)
      : sql_(sql), tokens_(tokens) {}

  // The common bytes (spaces, operators, words) are scanned with the position in a register;
  // the rare tokens hand it to the member functions through i_.
  bool run(std::vector<LiteralSlot>& slots) {
    const char* const text = sql_.data();
    const size_t size = sql_.size();
    size_t i = i_;
    while (i < size) {
      const char c = text[i];
      const Lead lead = lead_of(c);
      if (lead == Lead::Skip) {
        ++i;  // whitespace, operators
        continue;
      }
      if (lead == Lead::Word) {
        const size_t begin = i;
        do {
          ++i;
        } while (i < size && is_ident_cont(text[i]));
        if (i - begin == 1) {
          i_ = i;
          if (!single_letter_word(begin)) return false;
          i = i_;
        }
        if (tokens_ != nullptr) add_token(SqlToken::Kind::Word, begin, i);
        continue;
      }
      i_ = i;
      if (!scan_other(c, slots)) return false;
      i = i_;
    }
    i_ = i;
    return true;
  }

 private:
  // A token that starts with a Lead::Other byte, at i_.
  bool scan_other(char c, std::vector<LiteralSlot>& slots) {
    if (c == kMarker) return false;
    if ((c == '-' && at(i_ + 1) == '-') || (c == '/' && at(i_ + 1) == '*')) return skip_comment();
    if (c == '\'') {
      const size_t begin = i_;
      if (!scan_quoted('\'', false) || !no_string_follows()) return false;
      slots.push_back({static_cast<uint32_t>(begin), static_cast<uint32_t>(i_), 0, SlotKind::String});
      return true;
    }
    if (c == '"') return scan_quoted('"', false);
    if (c == '$') {
      const size_t begin = i_;
      if (!scan_dollar()) return false;
      if (is_digit(at(begin + 1))) token(SqlToken::Kind::Param, begin);
      return true;
    }
    if (is_digit(c) || (c == '.' && is_digit(at(i_ + 1)))) {
      const size_t begin = i_;
      SlotKind kind = SlotKind::Integer;
      if (!scan_number(kind)) return false;
      slots.push_back({static_cast<uint32_t>(begin), static_cast<uint32_t>(i_), 0, kind});
      return true;
    }
    ++i_;  // punctuation, or a lone '-', '/' or '.'
    if (c == '(' || c == ')' || c == '[' || c == ']' || c == ',') token(SqlToken::Kind::Punctuation, i_ - 1);
    return true;
  }

 private:
  void token(SqlToken::Kind kind, size_t begin) {
    if (tokens_ != nullptr) add_token(kind, begin, i_);
  }
  void add_token(SqlToken::Kind kind, size_t begin, size_t end) {
    tokens_->push_back({kind, static_cast<uint32_t>(begin), static_cast<uint32_t>(end)});
  }
  bool starts(std::string_view prefix) const { return sql_.substr(i_, prefix.size()) == prefix; }
  char at(size_t k) const { return k < sql_.size() ? sql_[k] : '\0'; }

  bool skip_comment() {
    if (starts("--")) {
      while (i_ < sql_.size() && sql_[i_] != '\n' && sql_[i_] != '\r') ++i_;
      return true;
    }
    int depth = 0;
    while (i_ < sql_.size()) {
      if (starts("/*")) {
        ++depth;
        i_ += 2;
      } else if (starts("*/")) {
        i_ += 2;
        if (--depth == 0) return true;
      } else {
        ++i_;
      }
    }
    return false;  // unterminated
  }

  // A quoted token starting at i_ (the quote); doubled quotes stay inside; with `backslash`,
  // a backslash escapes the next byte (E'' strings).
  bool scan_quoted(char quote, bool backslash) {
    ++i_;
    while (i_ < sql_.size()) {
      const char c = sql_[i_];
      if (backslash && c == '\\') {
        i_ += 2;
      } else if (c == quote) {
        if (at(i_ + 1) == quote) {
          i_ += 2;
        } else {
          ++i_;
          return true;
        }
      } else {
        ++i_;
      }
    }
    return false;
  }

  // After a string literal: PostgreSQL joins 'a' <newline> 'b' into one literal; refuse any
  // string right after a string (modulo spaces and comments) rather than model that rule.
  bool no_string_follows() {
    size_t k = i_;
    while (k < sql_.size()) {
      if (is_space(sql_[k])) {
        ++k;
      } else if (sql_.substr(k, 2) == "--") {
        while (k < sql_.size() && sql_[k] != '\n' && sql_[k] != '\r') ++k;
      } else if (sql_.substr(k, 2) == "/*") {
        return false;  // rare; not worth modelling
      } else {
        break;
      }
    }
    return at(k) != '\'';
  }

  // $n parameter, $tag$...$tag$ dollar quote, or a lone '$'.
  bool scan_dollar() {
    if (is_digit(at(i_ + 1))) {
      ++i_;
      while (is_digit(at(i_))) ++i_;
      return !is_ident_start(at(i_));  // "$1abc": trailing junk
    }
    size_t k = i_ + 1;
    if (is_ident_start(at(k))) {
      while (is_ident_start(at(k)) || is_digit(at(k))) ++k;
    }
    if (at(k) != '$') {
      ++i_;
      return true;
    }
    const std::string_view delimiter = sql_.substr(i_, k + 1 - i_);
    const size_t close = sql_.find(delimiter, k + 1);
    if (close == std::string_view::npos) return false;
    i_ = close + delimiter.size();
    return true;
  }

  bool scan_number(SlotKind& kind) {
    const size_t begin = i_;
    bool integer = true;
    while (is_digit(at(i_))) ++i_;
    if (at(i_) == '.') {
      if (at(i_ + 1) == '.') return false;  // "1..": PostgreSQL's decimalfail rule
      integer = false;
      ++i_;
      while (is_digit(at(i_))) ++i_;
    }
    if (at(i_) == 'e' || at(i_) == 'E') {
      size_t k = i_ + 1;
      if (at(k) == '+' || at(k) == '-') ++k;
      if (!is_digit(at(k))) return false;  // realfail
      integer = false;
      i_ = k;
      while (is_digit(at(i_))) ++i_;
    }
    if (is_ident_start(at(i_)) || at(i_) == '.' || at(i_) == '$') return false;  // junk
    kind = SlotKind::Numeric;
    if (integer) {
      // PostgreSQL makes an integer that does not fit int4 a numeric constant.
      std::string_view digits = sql_.substr(begin, i_ - begin);
      while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
      if (digits.size() < 10 || (digits.size() == 10 && digits <= "2147483647")) {
        kind = SlotKind::Integer;
      }
    }
    return true;
  }

  // After a one-letter word at `begin` (i_ just past it): E'', B'', X'', N'' strings stay
  // verbatim (i_ moves past the string), U&'' is refused.
  bool single_letter_word(size_t begin) {
    const char w = static_cast<char>(sql_[begin] | 0x20);
    if (w == 'u' && at(i_) == '&' && (at(i_ + 1) == '\'' || at(i_ + 1) == '"')) return false;
    if (at(i_) != '\'' || (w != 'e' && w != 'b' && w != 'x' && w != 'n')) return true;
    return scan_quoted('\'', w == 'e') && no_string_follows();
  }

  std::string_view sql_;
  std::vector<SqlToken>* tokens_;
  size_t i_ = 0;
};

}  // namespace

bool normalize_sql(std::string_view sql, NormalizedSql& out) {
  out.key.clear();
  out.slots.clear();
  if (sql.size() >= UINT32_MAX / 2) return false;
  // A NUL byte is an error PostgreSQL reports (22021) only a parse finds; inside a string
  // literal it would otherwise vanish into the literal's marker and hit a NUL-free text's entry.
  if (sql.find('\0') != std::string_view::npos) return false;
  Scanner scanner(sql);
  if (!scanner.run(out.slots)) return false;
  if (sql.empty()) return true;  // (memcpy's source must not be null)
  // A literal is at least one byte and its marker two: the key is at most one byte per slot
  // longer than the text. Written through a pointer, then cut to its length.
  out.key.resize(sql.size() + out.slots.size());
  char* const key = out.key.data();
  size_t length = 0;
  size_t copied = 0;
  for (LiteralSlot& slot : out.slots) {
    std::memcpy(key + length, sql.data() + copied, slot.begin - copied);
    length += slot.begin - copied;
    slot.key_begin = static_cast<uint32_t>(length);
    key[length++] = kMarker;
    key[length++] = static_cast<char>(slot.kind);
    copied = slot.end;
  }
  std::memcpy(key + length, sql.data() + copied, sql.size() - copied);
  out.key.resize(length + sql.size() - copied);
  return true;
}

bool token_is_word(std::string_view sql, const SqlToken& token, std::string_view lower_word) {
  if (token.kind != SqlToken::Kind::Word || token.end - token.begin != lower_word.size()) return false;
  for (size_t i = 0; i < lower_word.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(sql[token.begin + i])) != lower_word[i]) return false;
  }
  return true;
}

bool scan_tokens(std::string_view sql, std::vector<SqlToken>& out) {
  out.clear();
  if (sql.size() >= UINT32_MAX / 2 || sql.find('\0') != std::string_view::npos) return false;
  std::vector<LiteralSlot> slots;
  Scanner scanner(sql, &out);
  return scanner.run(slots);
}

std::string slot_value(std::string_view sql, const LiteralSlot& slot) {
  std::string value;
  slot_value_into(sql, slot, value);
  return value;
}

void slot_value_into(std::string_view sql, const LiteralSlot& slot, std::string& out) {
  std::string_view token = sql.substr(slot.begin, slot.end - slot.begin);
  if (slot.kind != SlotKind::String) {
    out.assign(token);
    return;
  }
  token = token.substr(1, token.size() - 2);
  out.clear();
  out.reserve(token.size());
  for (size_t k = 0; k < token.size(); ++k) {
    out.push_back(token[k]);
    if (token[k] == '\'') ++k;  // '' -> '
  }
}

KeyOffset key_offset_at(const NormalizedSql& normalized, uint32_t key_offset) {
  const auto& slots = normalized.slots;
  auto it = std::upper_bound(
      slots.begin(), slots.end(), key_offset,
      [](uint32_t offset, const LiteralSlot& slot) { return offset < slot.key_begin + kMarkerBytes; });
  return {key_offset, static_cast<uint32_t>(it - slots.begin())};
}

uint32_t key_to_sql_offset(const NormalizedSql& normalized, KeyOffset at) {
  // The last slot whose marker ends at or before the offset fixes the shift.
  if (at.slots_before == 0) return at.offset;
  const LiteralSlot& last = normalized.slots[at.slots_before - 1];
  return at.offset - (last.key_begin + kMarkerBytes) + last.end;
}

uint32_t sql_to_key_offset(const NormalizedSql& normalized, uint32_t sql_offset) {
  const auto& slots = normalized.slots;
  auto it = std::upper_bound(slots.begin(), slots.end(), sql_offset,
                             [](uint32_t offset, const LiteralSlot& slot) { return offset < slot.end; });
  if (it == slots.begin()) return sql_offset;
  const LiteralSlot& last = *(it - 1);
  return sql_offset - last.end + last.key_begin + kMarkerBytes;
}

int slot_at(const NormalizedSql& normalized, uint32_t sql_offset) {
  const auto& slots = normalized.slots;
  auto it = std::lower_bound(slots.begin(), slots.end(), sql_offset,
                             [](const LiteralSlot& slot, uint32_t offset) { return slot.begin < offset; });
  if (it == slots.end() || it->begin != sql_offset) return -1;
  return static_cast<int>(it - slots.begin());
}

bool number_at(std::string_view sql, size_t offset, std::string& out) {
  out.clear();
  size_t k = offset;
  if (k < sql.size() && sql[k] == '-') {
    out.push_back('-');
    ++k;
    while (k < sql.size() && is_space(sql[k])) ++k;
  }
  const size_t begin = k;
  while (k < sql.size() && (is_digit(sql[k]) || sql[k] == '.')) ++k;
  if (k < sql.size() && (sql[k] == 'e' || sql[k] == 'E')) {
    ++k;
    if (k < sql.size() && (sql[k] == '+' || sql[k] == '-')) ++k;
    while (k < sql.size() && is_digit(sql[k])) ++k;
  }
  if (k == begin || !std::any_of(sql.begin() + begin, sql.begin() + k, is_digit)) return false;
  out.append(sql.substr(begin, k - begin));
  return true;
}

}  // namespace sw::parser::detail
