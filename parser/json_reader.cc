#include "parser/json_reader.h"

#include "common/utf8.h"

namespace sw::parser::detail {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool JsonReader::fail() {
  ok_ = false;
  pos_ = json_.size();
  return false;
}

void JsonReader::skip_space() {
  while (pos_ < json_.size() &&
         (json_[pos_] == ' ' || json_[pos_] == '\n' || json_[pos_] == '\t' || json_[pos_] == '\r')) {
    ++pos_;
  }
}

bool JsonReader::consume(char c) {
  skip_space();
  if (pos_ < json_.size() && json_[pos_] == c) {
    ++pos_;
    return true;
  }
  return false;
}

bool JsonReader::begin_object() {
  if (!ok_ || !consume('{')) return fail();
  need_comma_ = false;
  return true;
}

bool JsonReader::begin_array() {
  if (!ok_ || !consume('[')) return fail();
  need_comma_ = false;
  return true;
}

bool JsonReader::next_key(std::string_view& key) {
  if (!ok_) return false;
  if (consume('}')) {
    need_comma_ = true;  // the object was a value of its parent
    return false;
  }
  if (need_comma_ && !consume(',')) return fail();
  skip_space();
  if (!string_token(key) || !consume(':')) return fail();
  need_comma_ = true;  // whatever value follows, the next key needs a comma
  return true;
}

bool JsonReader::next_element() {
  if (!ok_) return false;
  if (consume(']')) {
    need_comma_ = true;
    return false;
  }
  if (need_comma_ && !consume(',')) return fail();
  need_comma_ = true;
  return true;
}

bool JsonReader::string_token(std::string_view& out) {
  if (pos_ >= json_.size() || json_[pos_] != '"') return false;
  const size_t start = ++pos_;
  // Fast path: no escapes, view the input.
  while (pos_ < json_.size() && json_[pos_] != '"' && json_[pos_] != '\\') ++pos_;
  if (pos_ >= json_.size()) return false;
  if (json_[pos_] == '"') {
    out = json_.substr(start, pos_ - start);
    ++pos_;
    return true;
  }
  scratch_.assign(json_.substr(start, pos_ - start));
  while (pos_ < json_.size()) {
    char c = json_[pos_++];
    if (c == '"') {
      out = scratch_;
      return true;
    }
    if (c != '\\') {
      scratch_.push_back(c);
      continue;
    }
    if (pos_ >= json_.size()) return false;
    char e = json_[pos_++];
    switch (e) {
      case '"':
      case '\\':
      case '/': scratch_.push_back(e); break;
      case 'b': scratch_.push_back('\b'); break;
      case 'f': scratch_.push_back('\f'); break;
      case 'n': scratch_.push_back('\n'); break;
      case 'r': scratch_.push_back('\r'); break;
      case 't': scratch_.push_back('\t'); break;
      case 'u': {
        auto read_hex4 = [&](uint32_t& cp) {
          if (pos_ + 4 > json_.size()) return false;
          cp = 0;
          for (int i = 0; i < 4; ++i) {
            int v = hex_value(json_[pos_++]);
            if (v < 0) return false;
            cp = cp * 16 + static_cast<uint32_t>(v);
          }
          return true;
        };
        uint32_t cp = 0;
        if (!read_hex4(cp)) return false;
        if (cp >= 0xD800 && cp < 0xDC00 && pos_ + 1 < json_.size() && json_[pos_] == '\\' &&
            json_[pos_ + 1] == 'u') {
          pos_ += 2;
          uint32_t low = 0;
          if (!read_hex4(low) || low < 0xDC00 || low > 0xDFFF) return false;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        append_utf8(scratch_, cp);
        break;
      }
      default: return false;
    }
  }
  return false;
}

bool JsonReader::read_string(std::string& out) {
  if (!ok_) return false;
  skip_space();
  std::string_view view;
  if (!string_token(view)) return fail();
  out.assign(view);
  return true;
}

bool JsonReader::read_int(int64_t& out) {
  if (!ok_) return false;
  skip_space();
  bool negative = pos_ < json_.size() && json_[pos_] == '-';
  if (negative) ++pos_;
  const size_t start = pos_;
  uint64_t value = 0;
  while (pos_ < json_.size() && json_[pos_] >= '0' && json_[pos_] <= '9') {
    value = value * 10 + static_cast<uint64_t>(json_[pos_++] - '0');
    if (value > (1ull << 62)) return fail();
  }
  if (pos_ == start) return fail();
  out = negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
  return true;
}

bool JsonReader::read_bool(bool& out) {
  if (!ok_) return false;
  skip_space();
  if (json_.substr(pos_, 4) == "true") {
    pos_ += 4;
    out = true;
    return true;
  }
  if (json_.substr(pos_, 5) == "false") {
    pos_ += 5;
    out = false;
    return true;
  }
  return fail();
}

bool JsonReader::skip_value() {
  if (!ok_) return false;
  skip_space();
  size_t depth = 0;
  std::string_view ignored;
  do {
    if (pos_ >= json_.size()) return fail();
    char c = json_[pos_];
    if (c == '"') {
      if (!string_token(ignored)) return fail();
    } else if (c == '{' || c == '[') {
      ++depth;
      ++pos_;
    } else if (c == '}' || c == ']') {
      if (depth == 0) return fail();
      --depth;
      ++pos_;
    } else {
      ++pos_;  // ',', ':', whitespace, numbers, literals
      if (depth == 0) {
        // A scalar at top level: numbers and literals end at a delimiter.
        while (pos_ < json_.size() && json_[pos_] != ',' && json_[pos_] != '}' && json_[pos_] != ']' &&
               json_[pos_] != ' ' && json_[pos_] != '\n') {
          ++pos_;
        }
      }
    }
  } while (depth > 0);
  need_comma_ = true;
  return true;
}

}  // namespace sw::parser::detail

namespace sw::parser::detail {

bool JsonReader::unescape(std::string_view raw, std::string& out) {
  // Reuses the tokenizer: a reader over the quoted raw text decodes exactly as string_token.
  std::string quoted;
  quoted.reserve(raw.size() + 2);
  quoted.push_back('"');
  quoted.append(raw);
  quoted.push_back('"');
  JsonReader reader(quoted);
  return reader.read_string(out);
}

}  // namespace sw::parser::detail
