#include "wire/server_check.h"

#include <cstring>
#include <string>

#include "common/bytes.h"
#include "wire/messages.h"

namespace sw::wire {
namespace {

constexpr size_t kColumnFixedBytes = 18;  // table oid, attnum, type oid, typlen, typmod, format

Status invalid(const std::string& what) { return Status::server("08P01", what); }

// The column count of a well-formed RowDescription body.
Result<uint16_t> row_description_columns(std::string_view body) {
  if (body.size() < 2) return invalid("RowDescription has no column count");
  const uint16_t columns = load_be16(body.data());
  size_t at = 2;
  for (uint16_t i = 0; i < columns; ++i) {
    const void* nul = at < body.size() ? std::memchr(body.data() + at, '\0', body.size() - at) : nullptr;
    if (nul == nullptr)
      return invalid("RowDescription column " + std::to_string(i + 1) + " has no name terminator");
    at = static_cast<size_t>(static_cast<const char*>(nul) - body.data()) + 1;
    if (body.size() - at < kColumnFixedBytes)
      return invalid("RowDescription is shorter than its " + std::to_string(columns) + " columns");
    at += kColumnFixedBytes;
  }
  if (at != body.size()) return invalid("RowDescription has bytes after its last column");
  return columns;
}

// The column count of a well-formed DataRow body. 64-bit sums: no length can wrap.
Result<uint16_t> data_row_columns(std::string_view body) {
  if (body.size() < 2) return invalid("DataRow has no column count");
  const uint16_t columns = load_be16(body.data());
  uint64_t at = 2;
  for (uint16_t i = 0; i < columns; ++i) {
    if (body.size() - at < 4)
      return invalid("DataRow ends before column " + std::to_string(i + 1) + " of " +
                     std::to_string(columns));
    const uint32_t length = load_be32(body.data() + at);
    at += 4;
    if (length == 0xffffffffu) continue;  // NULL
    if (length > 0x7fffffffu)
      return invalid("DataRow column " + std::to_string(i + 1) + " has a negative length");
    if (body.size() - at < length)
      return invalid("DataRow column " + std::to_string(i + 1) + " claims " + std::to_string(length) +
                     " bytes but the message has " + std::to_string(body.size() - at) + " left");
    at += length;
  }
  if (at != body.size()) return invalid("DataRow has bytes after its last column");
  return columns;
}

}  // namespace

bool is_sqlstate(std::string_view code) {
  if (code.size() != 5) return false;
  for (char c : code)
    if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z'))) return false;
  return true;
}

// The checks without a Status (every message of every server goes through them) of the
// messages that need parsing; passes() takes the others inline.
bool ServerMessageCheck::passes_parsed(char type, std::string_view body) {
  switch (type) {
    case 'D': {
      auto columns = data_row_columns(body);
      return columns && (!columns_ || *columns == *columns_);
    }
    case 'T': {
      auto columns = row_description_columns(body);
      if (!columns) return false;
      columns_ = *columns;
      return true;
    }
    default: {  // 'E'
      columns_.reset();
      auto fields = decode_error_fields(body);
      return fields && is_sqlstate(fields->sqlstate);
    }
  }
}

// What passes() found wrong: it changed no state on a failure, so the same checks say why.
Status ServerMessageCheck::failure(char type, std::string_view body) const {
  switch (type) {
    case 'D': {
      auto columns = data_row_columns(body);
      if (!columns) return columns.status();
      return invalid("DataRow has " + std::to_string(*columns) + " columns but its RowDescription has " +
                     std::to_string(columns_.value_or(0)));
    }
    case 'T': return row_description_columns(body).status();
    case 'E': {
      auto fields = decode_error_fields(body);
      if (!fields) return fields.status();
      if (fields->sqlstate.empty()) return invalid("ErrorResponse without a SQLSTATE");
      return invalid("ErrorResponse with a malformed SQLSTATE");
    }
    default: return invalid("an unexpected message");
  }
}

}  // namespace sw::wire
