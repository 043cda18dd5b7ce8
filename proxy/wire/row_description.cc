#include "wire/row_description.h"

#include <string>

#include "wire/byte_reader.h"
#include "wire/message_writer.h"

namespace sw::wire {

Result<std::vector<RowField>> decode_row_description(std::string_view body) {
  ByteReader reader(body);
  uint16_t count = 0;
  if (!reader.u16(count)) return Status::server("08P01", "RowDescription without a field count");
  std::vector<RowField> fields;
  fields.reserve(count < body.size() / 19 ? count : body.size() / 19);  // a field takes >= 19 bytes
  for (uint16_t i = 0; i < count; ++i) {
    RowField f;
    if (!reader.cstr(f.name) || !reader.u32(f.table_oid) || !reader.i16(f.column) ||
        !reader.u32(f.type_oid) || !reader.i16(f.type_size) || !reader.i32(f.type_modifier) ||
        !reader.i16(f.format))
      return Status::server("08P01", "RowDescription field " + std::to_string(i + 1) + " is cut short");
    fields.push_back(f);
  }
  if (reader.remaining() != 0)
    return Status::server("08P01", "RowDescription has bytes after its last field");
  return fields;
}

void encode_row_description(std::string& out, const std::vector<RowField>& fields) {
  MessageWriter w(out);
  w.begin('T').int16(static_cast<uint16_t>(fields.size()));
  for (const RowField& f : fields) {
    w.cstr(f.name).int32(f.table_oid).int16(static_cast<uint16_t>(f.column)).int32(f.type_oid);
    w.int16(static_cast<uint16_t>(f.type_size)).int32(static_cast<uint32_t>(f.type_modifier));
    w.int16(static_cast<uint16_t>(f.format));
  }
  w.end();
}

Result<std::vector<uint32_t>> decode_parameter_description(std::string_view body) {
  ByteReader reader(body);
  uint16_t count = 0;
  if (!reader.u16(count) || reader.remaining() != 4 * static_cast<size_t>(count))
    return Status::server("08P01", "ParameterDescription's count does not match its length");
  std::vector<uint32_t> types(count);
  for (uint32_t& type : types) reader.u32(type);
  return types;
}

}  // namespace sw::wire
