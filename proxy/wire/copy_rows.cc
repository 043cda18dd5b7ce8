// Text and CSV rows (PostgreSQL 15: copyfromparse.c, CopyReadLineText and
// CopyReadAttributesText/CSV); binary rows are in copy_rows_binary.cc.
#include "wire/copy_rows.h"

namespace sw::wire {
namespace {

constexpr const char* kBadFormat = "22P04";

bool is_octal(char c) { return c >= '0' && c <= '7'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The character after a backslash in text format; `pos` is past it and moves past what the escape
// consumed (octal digits, hex digits).
char text_escape(std::string_view line, size_t& pos, char c) {
  switch (c) {
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'v': return '\v';
    case 'x': {
      if (pos >= line.size() || hex_value(line[pos]) < 0) return 'x';
      int value = hex_value(line[pos++]);
      if (pos < line.size() && hex_value(line[pos]) >= 0) value = value * 16 + hex_value(line[pos++]);
      return static_cast<char>(value);
    }
    default: break;
  }
  if (!is_octal(c)) return c;
  int value = c - '0';
  for (int i = 0; i < 2 && pos < line.size() && is_octal(line[pos]); ++i)
    value = value * 8 + (line[pos++] - '0');
  return static_cast<char>(value & 0xff);
}

}  // namespace

CopyInOptions copy_in_defaults(CopyFormat format) {
  CopyInOptions options;
  options.format = format;
  if (format == CopyFormat::Csv) {
    options.delimiter = ',';
    options.null_string.clear();
  }
  return options;
}

void CopyRowSplitter::feed(std::string_view bytes) {
  if (start_ > 0) {
    buffer_.erase(0, start_);
    start_ = 0;
  }
  if (item_.part == CopyPart::End && options_.format != CopyFormat::Binary) return;  // after `\.`
  buffer_.append(bytes);
}

const CopyItem& CopyRowSplitter::next(bool end_of_data) {
  if (item_.part == CopyPart::Error) return item_;
  item_.key.clear();
  item_.key_null = false;
  if (options_.format == CopyFormat::Binary) return next_binary(end_of_data);
  if (item_.part == CopyPart::End) {
    item_.raw = {};
    start_ = buffer_.size();
    return item_;
  }
  return next_line(end_of_data);
}

const CopyItem& CopyRowSplitter::next_line(bool end_of_data) {
  size_t content_end = 0;
  size_t line_end = 0;
  switch (scan_line(end_of_data, content_end, line_end)) {
    case Scan::NeedMore: return need_more();
    case Scan::Error: return item_;
    case Scan::EndMarker:
      start_ = buffer_.size();  // PostgreSQL ignores what follows `\.` up to CopyDone
      item_.part = CopyPart::End;
      item_.raw = {};
      return item_;
    case Scan::Line:
    case Scan::Data: break;
  }
  if (line_end - start_ > options_.max_row_bytes) return need_more();  // reports the size error
  if (options_.header && !header_done_) {
    header_done_ = true;
    return emit(CopyPart::Header, line_end);
  }
  const std::string_view content(buffer_.data() + start_, content_end - start_);
  const bool ok = options_.format == CopyFormat::Csv ? csv_key(content) : text_key(content);
  if (!ok) return item_;
  ++rows_;
  return emit(CopyPart::Row, line_end);
}

// Finds the end of the line at start_, resuming where the last call stopped (scan_, quote state).
CopyRowSplitter::Scan CopyRowSplitter::scan_line(bool end_of_data, size_t& content_end, size_t& line_end) {
  const std::string_view data = pending();
  const bool csv = options_.format == CopyFormat::Csv;
  // An escape equal to the quote is no escape here: the quote just toggles (as in PostgreSQL).
  const char escape = options_.escape == options_.quote ? '\0' : options_.escape;
  size_t i = scan_;
  while (i < data.size()) {
    const char c = data[i];
    if (c == '\\' && (!csv || i == 0)) {
      const Scan marker = end_marker(i, end_of_data, line_end);
      if (marker != Scan::Data) return marker;
      if (!csv) {
        i += 2;  // the escaped character is data, even a line end
        continue;
      }
    }
    if (csv) {
      if (in_quote_ && c == escape) last_was_escape_ = !last_was_escape_;
      if (c == options_.quote && !last_was_escape_) in_quote_ = !in_quote_;
      if (c != escape) last_was_escape_ = false;
      if (in_quote_) {
        ++i;
        continue;
      }
    }
    if (c == '\n' || c == '\r') return line_break(i, end_of_data, content_end, line_end);
    ++i;
  }
  scan_ = i;
  if (!end_of_data) return Scan::NeedMore;
  if (data.empty()) return Scan::EndMarker;
  if (csv && in_quote_) {
    fail(kBadFormat, "unterminated CSV quoted field");
    return Scan::Error;
  }
  content_end = line_end = buffer_.size();
  return Scan::Line;
}

// A line end (outside quotes) at `at`: it must be the first line's kind, as PostgreSQL requires.
CopyRowSplitter::Scan CopyRowSplitter::line_break(size_t at, bool end_of_data, size_t& content_end,
                                                  size_t& line_end) {
  const std::string_view data = pending();
  const bool csv = options_.format == CopyFormat::Csv;
  size_t length = 1;
  if (data[at] == '\n') {
    if (eol_ == Eol::Unknown) eol_ = Eol::Nl;
    if (eol_ != Eol::Nl) {
      fail(kBadFormat, csv ? "unquoted newline found in data; use a quoted CSV field for a newline"
                           : "literal newline found in data; write \\n for a newline");
      return Scan::Error;
    }
  } else {
    if (at + 1 >= data.size() && !end_of_data) {
      scan_ = at;  // a carriage return's meaning depends on the next byte
      return Scan::NeedMore;
    }
    const bool crnl = at + 1 < data.size() && data[at + 1] == '\n';
    if (eol_ == Eol::Unknown) eol_ = crnl ? Eol::CrNl : Eol::Cr;
    if (eol_ == Eol::Nl || (eol_ == Eol::CrNl && !crnl)) {
      fail(kBadFormat, csv ? "unquoted carriage return found in data; use a quoted CSV field for it"
                           : "literal carriage return found in data; write \\r for a carriage return");
      return Scan::Error;
    }
    if (eol_ == Eol::CrNl) length = 2;
  }
  content_end = start_ + at;
  line_end = start_ + at + length;
  return Scan::Line;
}

// A backslash at `at`: `\.` followed by a line end (or the end of the data) ends the data. Data
// when it is not a marker (always in CSV; in text the escaped character follows).
CopyRowSplitter::Scan CopyRowSplitter::end_marker(size_t at, bool end_of_data, size_t& line_end) {
  const std::string_view data = pending();
  const bool csv = options_.format == CopyFormat::Csv;
  if (at + 1 >= data.size()) {
    if (end_of_data) return Scan::Data;
    scan_ = at;
    return Scan::NeedMore;
  }
  if (data[at + 1] != '.') return Scan::Data;
  if (at != 0) {
    fail(kBadFormat, "end-of-copy marker \\. is not alone on its line");
    return Scan::Error;
  }
  if (at + 2 >= data.size()) {
    if (end_of_data) return Scan::EndMarker;
    scan_ = at;
    return Scan::NeedMore;
  }
  if (data[at + 2] == '\n' || data[at + 2] == '\r') {
    line_end = start_ + data.size();
    return Scan::EndMarker;
  }
  if (csv) return Scan::Data;
  fail(kBadFormat, "end-of-copy marker corrupt");
  return Scan::Error;
}

// The key field of a text line: fields split at unescaped delimiters, NULL when the raw field is
// the NULL string, else de-escaped.
bool CopyRowSplitter::text_key(std::string_view line) {
  size_t pos = 0;
  for (size_t field = 0;; ++field) {
    const size_t begin = pos;
    const bool key = field == options_.key_field;
    bool delimited = false;
    while (pos < line.size()) {
      char c = line[pos++];
      if (c == options_.delimiter) {
        delimited = true;
        break;
      }
      if (c == '\\') {
        if (pos >= line.size()) break;
        c = text_escape(line, pos, line[pos++]);
      }
      if (key) item_.key.push_back(c);
    }
    if (key) {
      const std::string_view raw = line.substr(begin, pos - begin - (delimited ? 1 : 0));
      item_.key_null = raw == options_.null_string;
      if (item_.key_null) item_.key.clear();
      return true;
    }
    if (!delimited) break;
  }
  fail(kBadFormat, "missing data for the shard key column");
  return false;
}

// The key field of a CSV line (quoted fields, the escape character inside quotes).
bool CopyRowSplitter::csv_key(std::string_view line) {
  size_t pos = 0;
  for (size_t field = 0;; ++field) {
    const size_t begin = pos;
    const bool key = field == options_.key_field;
    bool quoted = false;
    bool delimited = false;
    bool in_quotes = false;
    while (pos < line.size()) {
      const char c = line[pos++];
      if (!in_quotes) {
        if (c == options_.delimiter) {
          delimited = true;
          break;
        }
        if (c == options_.quote) {
          quoted = in_quotes = true;
          continue;
        }
      } else if (c == options_.escape && pos < line.size() &&
                 (line[pos] == options_.escape || line[pos] == options_.quote)) {
        if (key) item_.key.push_back(line[pos]);
        ++pos;
        continue;
      } else if (c == options_.quote) {
        in_quotes = false;
        continue;
      }
      if (key) item_.key.push_back(c);
    }
    if (in_quotes) {
      fail(kBadFormat, "unterminated CSV quoted field");
      return false;
    }
    if (key) {
      const std::string_view raw = line.substr(begin, pos - begin - (delimited ? 1 : 0));
      item_.key_null = !quoted && raw == options_.null_string;
      if (item_.key_null && options_.key_force_not_null) {
        item_.key_null = false;
        item_.key = options_.null_string;
      } else if (!item_.key_null && options_.key_force_null && item_.key == options_.null_string) {
        item_.key_null = true;
      }
      if (item_.key_null) item_.key.clear();
      return true;
    }
    if (!delimited) break;
  }
  fail(kBadFormat, "missing data for the shard key column");
  return false;
}

const CopyItem& CopyRowSplitter::emit(CopyPart part, size_t end) {
  item_.part = part;
  item_.raw = std::string_view(buffer_).substr(start_, end - start_);
  item_.line = ++line_;
  start_ = end;
  scan_ = 0;
  in_quote_ = false;
  last_was_escape_ = false;
  return item_;
}

const CopyItem& CopyRowSplitter::fail(std::string sqlstate, std::string message) {
  item_.part = CopyPart::Error;
  item_.raw = {};
  item_.key.clear();
  item_.line = line_ + 1;
  item_.error = Status::client(std::move(sqlstate), std::move(message));
  return item_;
}

const CopyItem& CopyRowSplitter::need_more() {
  if (buffer_.size() - start_ > options_.max_row_bytes) {
    return fail("54000", "a COPY row is longer than " + std::to_string(options_.max_row_bytes) + " bytes");
  }
  item_.part = CopyPart::NeedMore;
  item_.raw = {};
  return item_;
}

}  // namespace sw::wire
