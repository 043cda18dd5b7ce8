// CopyRowSplitter: text, CSV and binary COPY data split into rows and key fields exactly as
// PostgreSQL reads them, whatever the CopyData boundaries (every split offset is tried).
#include "wire/copy_rows.h"

#include <doctest/doctest.h>

#include <ostream>
#include <string>
#include <vector>

namespace sw::wire {
namespace {

struct Seen {
  CopyPart part;
  std::string raw;
  std::string key;
  bool null;
  uint64_t line;
  bool operator==(const Seen&) const = default;
};

std::string visible(const std::string& bytes) {
  std::string out;
  for (char c : bytes) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else
      out += c;
  }
  return out;
}

// Failed checks print the items.
std::ostream& operator<<(std::ostream& os, const std::vector<Seen>& items) {
  for (const Seen& item : items) {
    os << "[" << static_cast<int>(item.part) << " raw=" << visible(item.raw) << " key=" << visible(item.key)
       << (item.null ? " null" : "") << " line=" << item.line << "] ";
  }
  return os;
}

// Records the items up to NeedMore, End or Error; End only once (later calls repeat it).
void drain(CopyRowSplitter& splitter, bool end_of_data, std::vector<Seen>& out, bool& ended) {
  for (;;) {
    const CopyItem& item = splitter.next(end_of_data);
    if (item.part == CopyPart::NeedMore) return;
    if (item.part == CopyPart::End && ended) {
      CHECK(item.raw.empty());
      return;
    }
    out.push_back({item.part, std::string(item.raw), item.key, item.key_null,
                   item.part == CopyPart::Error || item.part == CopyPart::Row ? item.line : 0});
    ended = ended || item.part == CopyPart::End;
    if (item.part == CopyPart::End || item.part == CopyPart::Error) return;
  }
}

// Feeds `data` cut at `cuts` (ascending offsets), then ends it.
std::vector<Seen> split(const CopyInOptions& options, const std::string& data, std::vector<size_t> cuts) {
  CopyRowSplitter splitter(options);
  std::vector<Seen> out;
  bool ended = false;
  size_t from = 0;
  cuts.push_back(data.size());
  for (size_t cut : cuts) {
    splitter.feed(std::string_view(data).substr(from, cut - from));
    from = cut;
    drain(splitter, false, out, ended);
    if (!out.empty() && out.back().part == CopyPart::Error) return out;
  }
  drain(splitter, true, out, ended);
  return out;
}

// The items of `data` fed whole, which must equal those of every one- and two-cut feed and of a
// byte-at-a-time feed.
std::vector<Seen> split_everywhere(const CopyInOptions& options, const std::string& data) {
  const std::vector<Seen> whole = split(options, data, {});
  for (size_t a = 0; a <= data.size(); ++a) {
    CAPTURE(a);
    REQUIRE(split(options, data, {a}) == whole);
    for (size_t b = a; b <= data.size() && data.size() <= 64; b += 3)
      REQUIRE(split(options, data, {a, b}) == whole);
  }
  std::vector<size_t> every;
  for (size_t i = 1; i < data.size(); ++i) every.push_back(i);
  REQUIRE(split(options, data, every) == whole);
  return whole;
}

CopyInOptions text(size_t key_field) {
  CopyInOptions options = copy_in_defaults(CopyFormat::Text);
  options.key_field = key_field;
  return options;
}

CopyInOptions csv(size_t key_field) {
  CopyInOptions options = copy_in_defaults(CopyFormat::Csv);
  options.key_field = key_field;
  return options;
}

Seen row(std::string raw, std::string key, uint64_t line, bool null = false) {
  return {CopyPart::Row, std::move(raw), std::move(key), null, line};
}
Seen end(std::string raw = {}) { return {CopyPart::End, std::move(raw), {}, false, 0}; }
Seen header(std::string raw) { return {CopyPart::Header, std::move(raw), {}, false, 0}; }

std::string be16(int v) { return {static_cast<char>((v >> 8) & 0xff), static_cast<char>(v & 0xff)}; }
std::string be32(int64_t v) {
  std::string out;
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
  return out;
}
const std::string kBinaryHeader = std::string("PGCOPY\n\377\r\n\0", 11) + be32(0) + be32(0);

TEST_CASE("text rows: the key field de-escaped, NULL as the raw NULL string, every line end kept") {
  const std::string data = "1\ta\\tb\n\\x41\\102C\\n\tz\n\\N\tq\n 7 \t\\\\N\n";
  CHECK(split_everywhere(text(0), data) ==
        std::vector<Seen>{row("1\ta\\tb\n", "1", 1), row("\\x41\\102C\\n\tz\n", "ABC\n", 2),
                          row("\\N\tq\n", "", 3, true), row(" 7 \t\\\\N\n", " 7 ", 4), end()});
  // The second field; an escaped delimiter and an escaped newline are data.
  const std::string second = "a\tk\\\t1\nb\\\nc\tk2\n";
  CHECK(split_everywhere(text(1), second) ==
        std::vector<Seen>{row("a\tk\\\t1\n", "k\t1", 1), row("b\\\nc\tk2\n", "k2", 2), end()});
  // `\\N` is no NULL; a custom NULL string and delimiter.
  CopyInOptions custom = text(1);
  custom.delimiter = '|';
  custom.null_string = "nil";
  CHECK(split_everywhere(custom, "1|nil\n2|\\N\n") ==
        std::vector<Seen>{row("1|nil\n", "", 1, true), row("2|\\N\n", "N", 2), end()});
}

TEST_CASE("text: \\. ends the data, a last line without its line end is a row, headers go first") {
  CHECK(split_everywhere(text(0), "1\n2\n\\.\nignored\n") ==
        std::vector<Seen>{row("1\n", "1", 1), row("2\n", "2", 2), end()});
  CHECK(split_everywhere(text(0), "1\n2") == std::vector<Seen>{row("1\n", "1", 1), row("2", "2", 2), end()});
  CHECK(split_everywhere(text(0), "1\n\\.") == std::vector<Seen>{row("1\n", "1", 1), end()});
  CopyInOptions with_header = text(0);
  with_header.header = true;
  CHECK(split_everywhere(with_header, "id\tv\n5\tx\n") ==
        std::vector<Seen>{header("id\tv\n"), row("5\tx\n", "5", 2), end()});
  CHECK(split_everywhere(text(0), "") == std::vector<Seen>{end()});
}

TEST_CASE("text: line ends follow the first line's, as PostgreSQL requires") {
  CHECK(split_everywhere(text(0), "1\r\n2\r\n") ==
        std::vector<Seen>{row("1\r\n", "1", 1), row("2\r\n", "2", 2), end()});
  CHECK(split_everywhere(text(0), "1\r2\r") ==
        std::vector<Seen>{row("1\r", "1", 1), row("2\r", "2", 2), end()});
  const auto mixed = split_everywhere(text(0), "1\n2\r\n3\n");
  REQUIRE(mixed.size() == 2);
  CHECK(mixed[1].part == CopyPart::Error);
  CHECK(mixed[1].line == 2);
}

TEST_CASE("text errors: a missing key field, a misplaced or corrupt end marker") {
  CopyRowSplitter splitter(text(2));
  splitter.feed("1\t2\t3\n4\t5\n");
  CHECK(splitter.next(false).part == CopyPart::Row);
  const CopyItem& missing = splitter.next(false);
  REQUIRE(missing.part == CopyPart::Error);
  CHECK(missing.error.sqlstate == "22P04");
  CHECK(missing.line == 2);
  CHECK(splitter.next(true).part == CopyPart::Error);  // final
  for (const std::string bad : {"1\n2\\.\n", "1\n\\.x\n"}) {
    const auto seen = split_everywhere(text(0), bad);
    CHECK(seen.back().part == CopyPart::Error);
    CHECK(seen.back().line == 2);
  }
}

TEST_CASE("CSV rows: quotes, escapes, NULL only unquoted, quoted fields spanning lines") {
  const std::string data = "1,\"a,b\"\n\"2\",\"multi\nline\"\n\"3\"\"x\",y\n,empty key\n\"\",quoted empty\n";
  CHECK(split_everywhere(csv(0), data) ==
        std::vector<Seen>{row("1,\"a,b\"\n", "1", 1), row("\"2\",\"multi\nline\"\n", "2", 2),
                          row("\"3\"\"x\",y\n", "3\"x", 3), row(",empty key\n", "", 4, true),
                          row("\"\",quoted empty\n", "", 5), end()});
  CopyInOptions custom = csv(1);
  custom.delimiter = ';';
  custom.quote = '\'';
  custom.escape = '\\';
  custom.null_string = "NULL";
  custom.header = true;
  const std::string custom_data = "a;k\nx;'it\\'s;\\\\'\nx;NULL\nx;'NULL'\n\\.\n";
  CHECK(split_everywhere(custom, custom_data) ==
        std::vector<Seen>{header("a;k\n"), row("x;'it\\'s;\\\\'\n", "it's;\\", 2),
                          row("x;NULL\n", "", 3, true), row("x;'NULL'\n", "NULL", 4), end()});
}

TEST_CASE("CSV: \\. only at the start of a line outside quotes; FORCE_NULL and FORCE_NOT_NULL of the key") {
  CHECK(split_everywhere(csv(1), "1,\"a\n\\.\nb\"\n\\.x,2\n\\.\n") ==
        std::vector<Seen>{row("1,\"a\n\\.\nb\"\n", "a\n\\.\nb", 1), row("\\.x,2\n", "2", 2), end()});
  CopyInOptions not_null = csv(0);
  not_null.key_force_not_null = true;
  CHECK(split_everywhere(not_null, ",x\n") == std::vector<Seen>{row(",x\n", "", 1), end()});
  CopyInOptions force_null = csv(0);
  force_null.key_force_null = true;
  CHECK(split_everywhere(force_null, "\"\",x\n") == std::vector<Seen>{row("\"\",x\n", "", 1, true), end()});
  const auto open = split_everywhere(csv(0), "1,\"open\n");
  CHECK(open.back().part == CopyPart::Error);
  CHECK(open.back().line == 1);
}

TEST_CASE("binary: header, tuples with NULLs, trailer; each forwarded byte for byte") {
  const std::string tuple1 = be16(2) + be32(8) + std::string(7, '\0') + "\x05" + be32(-1);
  const std::string tuple2 = be16(2) + be32(-1) + be32(3) + "abc";
  const std::string data = kBinaryHeader + tuple1 + tuple2 + be16(-1);
  CopyInOptions options = copy_in_defaults(CopyFormat::Binary);
  CHECK(split_everywhere(options, data) == std::vector<Seen>{header(kBinaryHeader),
                                                             row(tuple1, std::string(7, '\0') + "\x05", 1),
                                                             row(tuple2, "", 2, true), end(be16(-1))});
  options.key_field = 1;
  const std::string extended = std::string("PGCOPY\n\377\r\n\0", 11) + be32(0) + be32(3) + "ext";
  CHECK(split_everywhere(options, extended + tuple2) ==
        std::vector<Seen>{header(extended), row(tuple2, "abc", 1), end()});
}

TEST_CASE("binary errors: signature, OIDs, short tuples, data after the trailer, a cut stream") {
  CopyInOptions options = copy_in_defaults(CopyFormat::Binary);
  options.key_field = 1;
  const std::string one_field = be16(1) + be32(1) + "x";
  for (const std::string& bad :
       {std::string("PGCOPY\n\377\r\n\1") + be32(0) + be32(0), std::string("XGCOPY"),
        std::string("PGCOPY\n\377\r\n\0", 11) + be32(1 << 16) + be32(0), kBinaryHeader + one_field,
        kBinaryHeader + be16(-1) + be16(-1), kBinaryHeader + be16(2) + be32(-2),
        kBinaryHeader + be16(2) + be32(5) + "ab", std::string("PGCOPY\n\377\r\n\0", 11)}) {
    const auto seen = split_everywhere(options, bad);
    REQUIRE(!seen.empty());
    CHECK(seen.back().part == CopyPart::Error);
  }
}

TEST_CASE("a row longer than max_row_bytes is an error before it is all buffered") {
  CopyInOptions options = text(0);
  options.max_row_bytes = 8;
  CopyRowSplitter splitter(options);
  splitter.feed("12345");
  CHECK(splitter.next(false).part == CopyPart::NeedMore);
  splitter.feed("67890");
  const CopyItem& item = splitter.next(false);
  REQUIRE(item.part == CopyPart::Error);
  CHECK(item.error.sqlstate == "54000");
}

TEST_CASE("binary_copy_header_size: the header and its extension, or nothing") {
  const std::string signature("PGCOPY\n\377\r\n\0", 11);
  const std::string plain = signature + std::string(8, '\0');
  CHECK(binary_copy_header_size(plain) == std::optional<size_t>(19));
  CHECK(binary_copy_header_size(plain + "tuples") == std::optional<size_t>(19));
  const std::string extended = signature + std::string(4, '\0') + std::string("\0\0\0\3", 4) + "ext";
  CHECK(binary_copy_header_size(extended + "x") == std::optional<size_t>(22));
  for (size_t k = 0; k < extended.size(); ++k) CHECK_FALSE(binary_copy_header_size(extended.substr(0, k)));
  CHECK_FALSE(binary_copy_header_size("PGCOPX\n\377\r\n\0" + std::string(8, '\0')));
}

}  // namespace
}  // namespace sw::wire
