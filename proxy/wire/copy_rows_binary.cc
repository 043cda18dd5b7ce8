// Binary COPY rows (PostgreSQL 15: copyfromparse.c, ReceiveCopyBinaryHeader and
// CopyReadBinaryTupleHeader): the 19-byte header (signature, flags, extension length) and its
// extension, then per tuple an int16 field count (-1 ends the data) and per field an int32 length
// (-1 = NULL) and that many bytes.
#include <limits>

#include "wire/byte_reader.h"
#include "wire/copy_rows.h"

namespace sw::wire {
namespace {

constexpr const char* kBadFormat = "22P04";
constexpr std::string_view kSignature("PGCOPY\n\377\r\n\0", 11);
constexpr uint32_t kOidsFlag = uint32_t{1} << 16;

}  // namespace

std::optional<size_t> binary_copy_header_size(std::string_view data) {
  ByteReader reader(data);
  std::string_view signature;
  uint32_t flags = 0;
  uint32_t extension = 0;
  if (!reader.bytes(kSignature.size(), signature) || signature != kSignature || !reader.u32(flags) ||
      !reader.u32(extension) || !reader.skip(extension))
    return std::nullopt;
  return reader.position();
}

const CopyItem& CopyRowSplitter::next_binary(bool end_of_data) {
  if (!header_done_) return binary_header(end_of_data);
  if (item_.part == CopyPart::End) {
    if (start_ < buffer_.size()) return fail(kBadFormat, "received copy data after EOF marker");
    item_.raw = {};
    return item_;
  }
  ByteReader reader(pending());
  int16_t count = 0;
  if (!reader.i16(count)) {
    if (!end_of_data) return need_more();
    if (start_ == buffer_.size()) {  // CopyDone without the -1 trailer: PostgreSQL accepts it
      item_.part = CopyPart::End;
      item_.raw = {};
      return item_;
    }
    return fail(kBadFormat, "unexpected EOF in COPY data");
  }
  if (count == -1) {
    const CopyItem& end = emit(CopyPart::End, start_ + 2);
    --line_;  // the trailer is no row
    return end;
  }
  if (count < 0 || static_cast<size_t>(count) <= options_.key_field) {
    return fail(kBadFormat, "row field count is " + std::to_string(count) + ", but the shard key is field " +
                                std::to_string(options_.key_field + 1));
  }
  for (int16_t field = 0; field < count; ++field) {
    int32_t length = 0;
    std::string_view value;
    if (!reader.i32(length)) break;
    if (length < -1) return fail(kBadFormat, "invalid field size");
    if (length >= 0 && reader.position() + static_cast<uint64_t>(length) > options_.max_row_bytes) {
      return fail("54000", "a COPY row is longer than " + std::to_string(options_.max_row_bytes) + " bytes");
    }
    if (length >= 0 && !reader.bytes(static_cast<uint64_t>(length), value)) break;
    if (static_cast<size_t>(field) == options_.key_field) {
      item_.key_null = length == -1;
      item_.key.assign(value);
    }
  }
  if (reader.truncated()) {
    item_.key.clear();
    item_.key_null = false;
    return end_of_data ? fail(kBadFormat, "unexpected EOF in COPY data") : need_more();
  }
  ++rows_;
  return emit(CopyPart::Row, start_ + reader.position());
}

const CopyItem& CopyRowSplitter::binary_header(bool end_of_data) {
  ByteReader reader(pending());
  std::string_view signature;
  uint32_t flags = 0;
  uint32_t extension = 0;
  const bool fixed = reader.bytes(kSignature.size(), signature) && reader.u32(flags) && reader.u32(extension);
  const std::string_view seen = pending().substr(0, kSignature.size());
  if (seen != kSignature.substr(0, seen.size()) || (fixed && signature != kSignature)) {
    return fail(kBadFormat, "COPY file signature not recognized");
  }
  if (fixed && (flags & kOidsFlag) != 0) return fail(kBadFormat, "invalid COPY file header (WITH OIDS)");
  if (fixed && (flags & ~kOidsFlag) >> 16 != 0) {
    return fail(kBadFormat, "unrecognized critical flags in COPY file header");
  }
  if (fixed && extension > static_cast<uint32_t>(std::numeric_limits<int32_t>::max())) {
    return fail(kBadFormat, "invalid COPY file header (wrong length)");
  }
  if (!fixed || !reader.skip(extension)) {
    if (end_of_data) return fail(kBadFormat, "invalid COPY file header (missing data)");
    return need_more();
  }
  header_done_ = true;
  const CopyItem& header = emit(CopyPart::Header, start_ + reader.position());
  --line_;  // PostgreSQL counts tuples only
  return header;
}

}  // namespace sw::wire
