// Fuzz target: wire::CopyRowSplitter, the COPY FROM STDIN row splitter (text, CSV, binary), and
// the bucket of each row's key as the session computes it.
//
// Input: byte 0 picks the format (bits 0-1: text, CSV, binary, CSV with `'` quotes and `\`
// escapes), the key field (bits 2-3), HEADER (bit 4), FORCE_NOT_NULL of the key (bit 5), a
// one-byte NULL string `N` in place of the default (bit 6); byte 1 is the CopyData size in
// which the rest is fed (0: the whole data in one message). The rest is the COPY data.
//
// Invariants:
//  * never crashes, never reads outside the data (every piece is fed from an exact-size copy);
//  * the items do not depend on the CopyData boundaries: fed in pieces of byte 1's size, then
//    byte by byte, the splitter hands out exactly the items of the whole data fed at once;
//  * what is forwarded (headers, rows, the binary trailer, in order) is a prefix of the data: no
//    byte is invented, dropped in the middle or reordered;
//  * End and Error are final, a Row has a line number above the previous one, rows() counts the
//    rows handed out, an Error has a SQLSTATE;
//  * a non-NULL key hashes to a bucket below the bucket count or is refused with a SQLSTATE.
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "router/bucket_hash.h"
#include "wire/copy_rows.h"

namespace {

using sw::fuzz::ExactCopy;
using sw::wire::CopyFormat;
using sw::wire::CopyInOptions;
using sw::wire::CopyItem;
using sw::wire::CopyPart;
using sw::wire::CopyRowSplitter;

struct Seen {
  CopyPart part;
  std::string raw;
  std::string key;
  bool null;
  uint64_t line;
  bool operator==(const Seen&) const = default;
};

void check_key(const CopyItem& row, CopyFormat format) {
  if (row.key_null) return;
  for (auto type : {sw::router::KeyType::Int8, sw::router::KeyType::Text, sw::router::KeyType::Uuid}) {
    auto bucket = format == CopyFormat::Binary ? sw::router::bucket_of_binary_value(type, row.key, 4096)
                                               : sw::router::bucket_of_text_value(type, row.key, 4096);
    if (bucket) {
      FUZZ_CHECK(bucket.value() < 4096);
    } else {
      FUZZ_CHECK(bucket.status().sqlstate.size() == 5);
    }
  }
}

// Feeds `data` in pieces of `piece` bytes (0: whole), recording every item once.
std::vector<Seen> run(const CopyInOptions& options, std::string_view data, size_t piece, bool check_keys) {
  CopyRowSplitter splitter(options);
  std::vector<Seen> seen;
  bool final_seen = false;
  uint64_t last_line = 0;
  uint64_t rows = 0;
  auto drain = [&](bool end_of_data) {
    for (;;) {
      const CopyItem& item = splitter.next(end_of_data);
      if (item.part == CopyPart::NeedMore) {
        FUZZ_CHECK(!end_of_data);
        return;
      }
      if (final_seen) {
        // End repeats with nothing more to forward; an error may still follow a binary End.
        FUZZ_CHECK(item.part == CopyPart::Error || (item.part == CopyPart::End && item.raw.empty()));
        if (item.part == CopyPart::End) return;
        if (!seen.empty() && seen.back().part == CopyPart::Error) return;
      }
      if (item.part == CopyPart::Row) {
        FUZZ_CHECK(item.line > last_line);
        last_line = item.line;
        ++rows;
        if (check_keys) check_key(item, options.format);
      }
      if (item.part == CopyPart::Error) FUZZ_CHECK(item.error.sqlstate.size() == 5);
      seen.push_back({item.part, std::string(item.raw), item.key, item.key_null, item.line});
      if (item.part == CopyPart::End || item.part == CopyPart::Error) {
        final_seen = true;
        return;
      }
    }
  };
  for (size_t at = 0; at < data.size();) {
    const size_t n = piece == 0 ? data.size() : std::min(piece, data.size() - at);
    ExactCopy chunk(data.substr(at, n));
    splitter.feed(chunk.view());
    at += n;
    drain(false);
    if (!seen.empty() && seen.back().part == CopyPart::Error) break;
  }
  if (seen.empty() || seen.back().part != CopyPart::Error) drain(true);
  FUZZ_CHECK(splitter.rows() == rows);
  return seen;
}

CopyInOptions options_of(uint8_t mode) {
  const uint8_t format = mode & 3;
  CopyInOptions options = sw::wire::copy_in_defaults(format == 2   ? CopyFormat::Binary
                                                     : format == 0 ? CopyFormat::Text
                                                                   : CopyFormat::Csv);
  if (format == 3) {
    options.quote = '\'';
    options.escape = '\\';
  }
  options.key_field = (mode >> 2) & 3;
  options.header = (mode & 0x10) != 0 && options.format != CopyFormat::Binary;
  options.key_force_not_null = (mode & 0x20) != 0 && options.format == CopyFormat::Csv;
  if ((mode & 0x40) != 0) options.null_string = "N";
  options.max_row_bytes = 1024;
  return options;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const CopyInOptions options = options_of(data[0]);
  const size_t piece = data[1];
  const std::string_view copy(reinterpret_cast<const char*>(data) + 2, size - 2);

  const std::vector<Seen> whole = run(options, copy, 0, true);
  FUZZ_CHECK(run(options, copy, piece, false) == whole);
  FUZZ_CHECK(run(options, copy, 1, false) == whole);

  std::string forwarded;
  for (const Seen& item : whole) forwarded += item.raw;
  FUZZ_CHECK(copy.substr(0, forwarded.size()) == forwarded);
  return 0;
}
