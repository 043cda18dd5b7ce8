#include "parser/sql_lexer.h"

#include <algorithm>
#include <array>

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
  for (char c : {kMarker, '-', '/', '\'', '"', '$', '.', '(', ')', ','})
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

  bool run(std::vector<LiteralSlot>& slots) {
    while (i_ < sql_.size()) {
      const char c = sql_[i_];
      const Lead lead = lead_of(c);
      if (lead == Lead::Skip) {
        ++i_;  // whitespace, operators
        continue;
      }
      if (lead == Lead::Word) {
        const size_t begin = i_;
        if (!scan_word()) return false;
        token(SqlToken::Kind::Word, begin);
        continue;
      }
      if (c == kMarker) return false;
      if ((c == '-' && at(i_ + 1) == '-') || (c == '/' && at(i_ + 1) == '*')) {
        if (!skip_comment()) return false;
      } else if (c == '\'') {
        const size_t begin = i_;
        if (!scan_quoted('\'', false) || !no_string_follows()) return false;
        slots.push_back({static_cast<uint32_t>(begin), static_cast<uint32_t>(i_), 0, SlotKind::String});
      } else if (c == '"') {
        if (!scan_quoted('"', false)) return false;
      } else if (c == '$') {
        const size_t begin = i_;
        if (!scan_dollar()) return false;
        if (is_digit(at(begin + 1))) token(SqlToken::Kind::Param, begin);
      } else if (is_digit(c) || (c == '.' && i_ + 1 < sql_.size() && is_digit(sql_[i_ + 1]))) {
        const size_t begin = i_;
        SlotKind kind = SlotKind::Integer;
        if (!scan_number(kind)) return false;
        slots.push_back({static_cast<uint32_t>(begin), static_cast<uint32_t>(i_), 0, kind});
      } else {
        if (c == '(' || c == ')' || c == ',') {
          ++i_;
          token(SqlToken::Kind::Punctuation, i_ - 1);
          continue;
        }
        ++i_;  // a lone '-', '/' or '.'
      }
    }
    return true;
  }

 private:
  void token(SqlToken::Kind kind, size_t begin) {
    if (tokens_ != nullptr)
      tokens_->push_back({kind, static_cast<uint32_t>(begin), static_cast<uint32_t>(i_)});
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

  // An identifier or keyword; E'', B'', X'', N'' strings stay verbatim, U&'' is refused.
  bool scan_word() {
    const size_t begin = i_;
    while (i_ < sql_.size() && is_ident_cont(sql_[i_])) ++i_;
    if (i_ - begin != 1) return true;
    const std::string_view word = sql_.substr(begin, 1);
    const char w = static_cast<char>(word[0] | 0x20);
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
  out.key.reserve(sql.size());
  size_t copied = 0;
  for (LiteralSlot& slot : out.slots) {
    out.key.append(sql.substr(copied, slot.begin - copied));
    slot.key_begin = static_cast<uint32_t>(out.key.size());
    out.key.push_back(kMarker);
    out.key.push_back(static_cast<char>(slot.kind));
    copied = slot.end;
  }
  out.key.append(sql.substr(copied));
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

uint32_t key_to_sql_offset(const NormalizedSql& normalized, uint32_t key_offset) {
  // The last slot whose marker ends at or before key_offset fixes the shift.
  const auto& slots = normalized.slots;
  auto it = std::upper_bound(
      slots.begin(), slots.end(), key_offset,
      [](uint32_t offset, const LiteralSlot& slot) { return offset < slot.key_begin + kMarkerBytes; });
  if (it == slots.begin()) return key_offset;
  const LiteralSlot& last = *(it - 1);
  return key_offset - (last.key_begin + kMarkerBytes) + last.end;
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
