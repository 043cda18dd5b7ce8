// RowDescription ('T'): a server's description of a result's columns, decoded field by field and
// encoded back (a proxy that rewrites a result, docs/architecture.md §5.6, keeps what it does not
// change byte for byte). ParameterDescription ('t'): a statement's parameter types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace sw::wire {

struct RowField {
  std::string_view name;   // points into the decoded body
  uint32_t table_oid = 0;  // 0: not a table column
  int16_t column = 0;      // its attribute number in that table (0: none)
  uint32_t type_oid = 0;
  int16_t type_size = 0;       // pg_type.typlen (negative: variable width)
  int32_t type_modifier = -1;  // pg_attribute.atttypmod
  int16_t format = 0;          // 0 text, 1 binary
};

// A column the proxy computes itself, in text format: no table, variable width, typmod -1.
inline RowField computed_column(std::string_view name, uint32_t type_oid) {
  RowField field;
  field.name = name;
  field.type_oid = type_oid;
  field.type_size = -1;
  return field;
}

// The body after the 5-byte header: the field count, then each field. Fails (08P01) on a missing
// NUL, a field cut short or bytes after the last field.
Result<std::vector<RowField>> decode_row_description(std::string_view body);
// The whole message; a decoded body encodes back to the same bytes.
void encode_row_description(std::string& out, const std::vector<RowField>& fields);

// ParameterDescription ('t'): the type OID of each parameter of a described statement. Fails
// (08P01) when the count does not match the bytes.
Result<std::vector<uint32_t>> decode_parameter_description(std::string_view body);

}  // namespace sw::wire
