#include "session/cursor_statement.h"

#include <cctype>
#include <charconv>
#include <vector>

namespace sw::session {
namespace {

struct Token {
  std::string text;  // a word lower-cased, a quoted identifier's name, a number, or one character
  bool quoted = false;
  bool word = false;
  size_t end = 0;  // offset after the token
};

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$'; }

// Skips spaces and comments from `at`; false on an unterminated comment.
bool skip_space(std::string_view sql, size_t& at) {
  while (at < sql.size()) {
    if (std::isspace(static_cast<unsigned char>(sql[at])) != 0) {
      ++at;
    } else if (sql.substr(at, 2) == "--") {
      while (at < sql.size() && sql[at] != '\n') ++at;
    } else if (sql.substr(at, 2) == "/*") {
      int depth = 0;
      do {
        if (at + 1 >= sql.size()) return false;
        if (sql.substr(at, 2) == "/*") {
          ++depth;
          at += 2;
        } else if (sql.substr(at, 2) == "*/") {
          --depth;
          at += 2;
        } else {
          ++at;
        }
      } while (depth > 0);
    } else {
      return true;
    }
  }
  return true;
}

// The next token from `at`; false at the end or on something not read here.
bool next_token(std::string_view sql, size_t& at, Token& out) {
  out = Token{};
  if (!skip_space(sql, at) || at >= sql.size()) return false;
  const char c = sql[at];
  if (c == '"') {
    size_t i = at + 1;
    for (;;) {
      if (i >= sql.size()) return false;
      if (sql[i] == '"') {
        if (i + 1 < sql.size() && sql[i + 1] == '"') {
          out.text.push_back('"');
          i += 2;
          continue;
        }
        break;
      }
      out.text.push_back(sql[i++]);
    }
    out.quoted = true;
    at = i + 1;
  } else if (word_char(c) || c == '-' || c == '+') {
    size_t i = at + 1;
    while (i < sql.size() && word_char(sql[i])) ++i;
    for (size_t k = at; k < i; ++k)
      out.text.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(sql[k]))));
    out.word = std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_';
    at = i;
  } else {
    out.text.assign(1, c);
    ++at;
  }
  out.end = at;
  return true;
}

bool read_count(const std::string& text, int64_t& out) {
  const char* begin = text.data() + (text[0] == '+' ? 1 : 0);
  auto [end, error] = std::from_chars(begin, text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size();
}

// Only a trailing ';' and spaces may follow.
bool at_end(std::string_view sql, size_t at) {
  Token token;
  if (!next_token(sql, at, token)) return true;
  if (token.text != ";") return false;
  return !next_token(sql, at, token);
}

CursorStatement read_declare(std::string_view sql, size_t at) {
  CursorStatement out;
  Token token;
  if (!next_token(sql, at, token) || (!token.word && !token.quoted)) return {};
  out.name = token.text;
  for (;;) {  // options before CURSOR
    if (!next_token(sql, at, token) || !token.word) return {};
    if (token.text == "cursor") break;
    if (token.text == "binary") {
      out.binary = true;
    } else if (token.text == "scroll") {
      out.scroll = true;
    } else if (token.text == "no") {
      if (!next_token(sql, at, token) || token.text != "scroll") return {};
    } else if (token.text == "insensitive") {
      out.insensitive = true;
    } else if (token.text != "asensitive") {
      return {};
    }
  }
  if (!next_token(sql, at, token) || !token.word) return {};
  if (token.text == "with" || token.text == "without") {
    out.hold = token.text == "with";
    if (!next_token(sql, at, token) || token.text != "hold") return {};
    if (!next_token(sql, at, token)) return {};
  }
  if (token.text != "for") return {};
  out.query = std::string(sql.substr(at));
  out.kind = CursorStatement::Kind::Declare;
  return out;
}

// The direction and count of `tokens` (the words before the name; `forward`: the count a forward
// form read).
bool read_direction(const std::vector<Token>& tokens, int64_t forward, CursorStatement& out) {
  using Direction = CursorStatement::Direction;
  const std::string first = tokens.empty() ? "" : tokens[0].text;
  int64_t n = 1;
  if (tokens.size() > 1 && tokens[1].text == "all") {
    n = CursorStatement::kAll;
  } else if (tokens.size() > 1 && !read_count(tokens[1].text, n)) {
    return false;
  }
  out.direction = Direction::Forward;
  out.steps = forward;
  const bool single = first == "prior" || first == "first" || first == "last";
  if ((single && tokens.size() != 1) || tokens.size() > 2) return false;
  if (first == "prior" || first == "backward") {
    out.direction = Direction::Backward;
    out.steps = first == "prior" ? 1 : n;
  } else if (first == "first" || first == "last" || first == "absolute") {
    out.direction = Direction::Absolute;
    out.steps = first == "first" ? 1 : first == "last" ? -1 : n;
    return first != "absolute" || (tokens.size() == 2 && n != CursorStatement::kAll);
  } else if (first == "relative") {
    out.direction = Direction::Relative;
    out.steps = n;
    return tokens.size() == 2 && n != CursorStatement::kAll;
  }
  if (out.steps == 0) out.direction = Direction::Relative;  // FETCH 0: the current row again
  if (out.steps < 0) {
    out.direction = out.direction == Direction::Forward ? Direction::Backward : Direction::Forward;
    out.steps = -out.steps;
  }
  return true;
}

// FETCH / MOVE [direction] [FROM | IN] name.
CursorStatement read_fetch(std::string_view sql, size_t at, bool move) {
  CursorStatement out;
  std::vector<Token> tokens;
  Token token;
  while (next_token(sql, at, token)) {
    if (token.text == ";") break;
    tokens.push_back(token);
  }
  if (token.text == ";" && !at_end(sql, token.end - 1)) return {};
  if (tokens.empty() || (!tokens.back().word && !tokens.back().quoted)) return {};
  out.name = tokens.back().text;
  tokens.pop_back();
  if (!tokens.empty() && (tokens.back().text == "from" || tokens.back().text == "in") &&
      !tokens.back().quoted)
    tokens.pop_back();
  auto count_of = [&](size_t i, int64_t& n) {
    if (i >= tokens.size()) return false;
    if (tokens[i].text == "all") {
      n = CursorStatement::kAll;
      return true;
    }
    return read_count(tokens[i].text, n);
  };
  int64_t n = 1;
  size_t used = 0;
  const std::string first = tokens.empty() ? "" : tokens[0].text;
  if (tokens.empty() || first == "next") {
    used = tokens.empty() ? 0 : 1;
  } else if (first == "forward") {
    used = count_of(1, n) ? 2 : 1;
  } else if (first == "all" || count_of(0, n)) {
    if (first == "all") n = CursorStatement::kAll;
    used = 1;
  } else if (first == "backward" || first == "prior" || first == "first" || first == "last" ||
             first == "absolute" || first == "relative") {
    out.backward = first == "backward" || first == "absolute" || first == "relative"
                       ? (tokens.size() > 1 ? first + " " + tokens[1].text : first)
                       : first;
    used = tokens.size();
  } else {
    return {};
  }
  if (used != tokens.size()) return {};
  if (out.backward.empty() && n != CursorStatement::kAll && n <= 0)
    out.backward = (move ? "MOVE " : "FETCH ") + std::to_string(n);
  if (!read_direction(tokens, n, out)) return {};
  out.count = n;
  out.kind = move ? CursorStatement::Kind::Move : CursorStatement::Kind::Fetch;
  return out;
}

}  // namespace

CursorStatement read_cursor_statement(std::string_view sql) {
  size_t at = 0;
  Token token;
  if (!next_token(sql, at, token) || !token.word) return {};
  if (token.text == "declare") return read_declare(sql, at);
  if (token.text == "fetch" || token.text == "move") {
    CursorStatement fetch = read_fetch(sql, at, token.text == "move");
    if (fetch.kind == CursorStatement::Kind::None) fetch.kind = CursorStatement::Kind::Unread;
    return fetch;
  }
  if (token.text != "close") return {};
  if (!next_token(sql, at, token) || (!token.word && !token.quoted) || !at_end(sql, at)) return {};
  CursorStatement out;
  out.kind =
      token.text == "all" && !token.quoted ? CursorStatement::Kind::CloseAll : CursorStatement::Kind::Close;
  out.name = token.text;
  return out;
}

std::string quoted_name(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

}  // namespace sw::session
