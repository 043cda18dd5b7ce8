// The rows of a client's COPY ... FROM STDIN data (docs/architecture.md §5.10), split so that each
// row can be forwarded unchanged to the shard that owns its key. Pure: no I/O, never throws.
//
// CopyData message boundaries mean nothing in COPY: a row may span many messages and a message
// may hold many rows. The splitter is fed each CopyData payload as it arrives and hands out
// complete items one by one:
//  * Header: the text/CSV header line (HEADER true or MATCH) or the binary file header
//    (signature, flags, extension); every shard's COPY expects it first, so it goes to all;
//  * Row: one row's bytes exactly as the client sent them (text/CSV: its line end included;
//    binary: the tuple), with the key field decoded: text/CSV de-escaped and unquoted exactly as
//    PostgreSQL's COPY reads it, binary the value's bytes (in the key type's binary form);
//  * End: the end of the data: text `\.` (nothing to forward: every shard gets CopyDone), binary
//    the -1 trailer (forwarded to every shard); also, at CopyDone, the end of the bytes;
//  * NeedMore: feed the next CopyData (or call next(true) at CopyDone);
//  * Error: the data is not COPY data PostgreSQL would accept (SQLSTATE 22P04, "line" the row).
// End and Error are final: every later call returns them again.
//
// The text format follows PostgreSQL 15's CopyReadLineText and CopyReadAttributesText; CSV
// CopyReadAttributesCSV (quoted fields may span lines; `\.` ends the data only at the start of a
// line); binary CopyReadBinaryTupleHeader. The line end is the first line's (\n, \r or \r\n)
// and another one later is an error, as in PostgreSQL. `\.` anywhere but at the start of a line
// of text is refused (PostgreSQL 15 would silently end the data there). The client encoding
// must be ASCII-compatible (UTF8, LATIN1, ...: no SJIS or BIG5), as for routing (§6.1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sw::wire {

enum class CopyFormat : uint8_t { Text, Csv, Binary };

struct CopyInOptions {
  CopyFormat format = CopyFormat::Text;
  char delimiter = '\t';
  std::string null_string = "\\N";
  bool header = false;   // HEADER true or MATCH (text and CSV): the first line goes to every shard
  char quote = '"';      // CSV only
  char escape = '"';     // CSV only
  size_t key_field = 0;  // the key's position among the copied columns (0 = first)
  // CSV FORCE_NOT_NULL / FORCE_NULL naming the key column.
  bool key_force_not_null = false;
  bool key_force_null = false;
  uint64_t max_row_bytes = uint64_t{256} << 20;  // a longer row is an error (54000)
};

// PostgreSQL's defaults for a format: text `\t` and `\N`; CSV `,`, the empty string, `"` and `"`.
CopyInOptions copy_in_defaults(CopyFormat format);

enum class CopyPart : uint8_t { Header, Row, End, NeedMore, Error };

struct CopyItem {
  CopyPart part = CopyPart::NeedMore;
  std::string_view raw;  // Header, Row, binary End: the bytes to forward unchanged
  bool key_null = false;
  std::string key;    // Row: the key field's value (not valid when key_null)
  uint64_t line = 0;  // Row and Error: the row's number as PostgreSQL counts it (header included)
  Status error;       // Error: SQLSTATE 22P04 (or 54000), the message says what; never a value
};

class CopyRowSplitter {
 public:
  explicit CopyRowSplitter(CopyInOptions options) : options_(std::move(options)) {}

  // The next CopyData payload. Views of items returned earlier become invalid.
  void feed(std::string_view bytes);
  // The next item. `end_of_data`: the client sent CopyDone, no more bytes will come; what is
  // left is the last row (text/CSV without a final line end) or an error (binary).
  // The returned reference is valid until the next call to feed or next.
  const CopyItem& next(bool end_of_data);

  uint64_t rows() const { return rows_; }
  const CopyInOptions& options() const { return options_; }

 private:
  enum class Eol : uint8_t { Unknown, Nl, Cr, CrNl };
  // Data: a backslash that is no end marker (scan_line goes on).
  enum class Scan : uint8_t { Line, NeedMore, EndMarker, Error, Data };

  const CopyItem& next_line(bool end_of_data);
  Scan scan_line(bool end_of_data, size_t& content_end, size_t& line_end);
  Scan line_break(size_t at, bool end_of_data, size_t& content_end, size_t& line_end);
  Scan end_marker(size_t at, bool end_of_data, size_t& line_end);
  bool text_key(std::string_view line);
  bool csv_key(std::string_view line);

  const CopyItem& next_binary(bool end_of_data);
  const CopyItem& binary_header(bool end_of_data);

  const CopyItem& emit(CopyPart part, size_t end);
  const CopyItem& fail(std::string sqlstate, std::string message);
  const CopyItem& need_more();
  std::string_view pending() const { return std::string_view(buffer_).substr(start_); }

  CopyInOptions options_;
  std::string buffer_;  // bytes fed and not yet handed out, from start_
  size_t start_ = 0;    // the first byte of the next item
  size_t scan_ = 0;     // text/CSV: how far the current line was scanned (from start_)
  bool in_quote_ = false;
  bool last_was_escape_ = false;
  Eol eol_ = Eol::Unknown;
  bool header_done_ = false;
  uint64_t line_ = 0;
  uint64_t rows_ = 0;
  CopyItem item_;
};

// The size of the binary COPY file header that `data` starts with (the 11-byte signature, the
// flags, the extension length and the extension: a shard's first CopyData of COPY ... TO STDOUT
// (BINARY)); nullopt when `data` does not start with a whole one. The flags are not checked.
std::optional<size_t> binary_copy_header_size(std::string_view data);
// The end of binary COPY data: a tuple field count of -1.
constexpr std::string_view kBinaryCopyTrailer("\xff\xff", 2);

}  // namespace sw::wire
