#include "parser/sql_scan.h"

#include <cctype>

namespace sw::parser {

bool is_ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool is_ident_char(char c) {
  return is_ident_start(c) || std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '$';
}

size_t skip_comment(std::string_view s, size_t i) {
  if (s.compare(i, 2, "--") == 0) {
    size_t end = s.find('\n', i);
    return end == std::string_view::npos ? s.size() : end + 1;
  }
  if (s.compare(i, 2, "/*") != 0) return i;
  int depth = 0;
  while (i < s.size()) {
    if (s.compare(i, 2, "/*") == 0) {
      ++depth;
      i += 2;
    } else if (s.compare(i, 2, "*/") == 0) {
      i += 2;
      if (--depth == 0) return i;
    } else {
      ++i;
    }
  }
  return s.size();
}

size_t skip_space(std::string_view s, size_t i) {
  while (i < s.size()) {
    if (std::isspace(static_cast<unsigned char>(s[i])) != 0) {
      ++i;
      continue;
    }
    size_t past = skip_comment(s, i);
    if (past == i) break;
    i = past;
  }
  return i;
}

size_t skip_quoted(std::string_view s, size_t i) {
  char c = s[i];
  bool after_ident = i > 0 && is_ident_char(s[i - 1]);
  if (c == '\'' || c == '"') {
    bool backslashes =
        c == '\'' && i > 0 && (s[i - 1] == 'e' || s[i - 1] == 'E') && (i < 2 || !is_ident_char(s[i - 2]));
    for (size_t j = i + 1; j < s.size(); ++j) {
      if (backslashes && s[j] == '\\') {
        ++j;
      } else if (s[j] == c) {
        if (j + 1 < s.size() && s[j + 1] == c) {
          ++j;
        } else {
          return j + 1;
        }
      }
    }
    return s.size();
  }
  if (c != '$' || after_ident) return i;
  size_t j = i + 1;
  if (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j])) != 0) return i;  // $n
  while (j < s.size() && is_ident_char(s[j]) && s[j] != '$') ++j;
  if (j >= s.size() || s[j] != '$') return i;
  std::string_view tag = s.substr(i, j - i + 1);
  size_t end = s.find(tag, j + 1);
  return end == std::string_view::npos ? s.size() : end + tag.size();
}

std::optional<Identifier> read_identifier(std::string_view s, size_t* i) {
  size_t at = skip_space(s, *i);
  if (at >= s.size()) return std::nullopt;
  Identifier id;
  if (s[at] == '"') {
    size_t end = skip_quoted(s, at);
    if (end > s.size() || s[end - 1] != '"' || end - at < 2) return std::nullopt;
    for (size_t j = at + 1; j + 1 < end; ++j) {
      id.text += s[j];
      if (s[j] == '"') ++j;  // "" stands for one quote
    }
    id.quoted = true;
    *i = end;
    return id;
  }
  if (!is_ident_start(s[at])) return std::nullopt;
  size_t end = at;
  while (end < s.size() && is_ident_char(s[end])) {
    id.text += static_cast<char>(std::tolower(static_cast<unsigned char>(s[end])));
    ++end;
  }
  *i = end;
  return id;
}

bool read_keyword(std::string_view s, size_t* i, std::string_view keyword) {
  size_t at = *i;
  auto id = read_identifier(s, &at);
  if (!id || id->quoted || id->text != keyword) return false;
  *i = at;
  return true;
}

std::string trim(std::string_view s) {
  size_t begin = skip_space(s, 0);
  size_t end = s.size();
  while (end > begin && (std::isspace(static_cast<unsigned char>(s[end - 1])) != 0 || s[end - 1] == ';'))
    --end;
  return std::string(s.substr(begin, end - begin));
}

std::optional<std::vector<std::string>> read_list(std::string_view s, size_t* i) {
  size_t at = skip_space(s, *i);
  if (at >= s.size() || s[at] != '(') return std::nullopt;
  std::vector<std::string> items;
  int depth = 0;
  size_t item_start = at + 1;
  for (size_t j = at; j < s.size();) {
    size_t past = skip_quoted(s, j);
    if (past == j) past = skip_comment(s, j);
    if (past != j) {
      j = past;
      continue;
    }
    char c = s[j];
    if (c == '(' || c == '[') {
      ++depth;
    } else if (c == ')' || c == ']') {
      if (--depth == 0) {
        std::string last = trim(s.substr(item_start, j - item_start));
        if (!last.empty() || !items.empty()) items.push_back(std::move(last));
        *i = j + 1;
        return items;
      }
    } else if (c == ',' && depth == 1) {
      items.push_back(trim(s.substr(item_start, j - item_start)));
      item_start = j + 1;
    }
    ++j;
  }
  return std::nullopt;
}

bool at_end(std::string_view s, size_t i) { return trim(s.substr(i)).empty(); }

}  // namespace sw::parser
