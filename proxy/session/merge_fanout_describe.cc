// MergeFanout: the shards' RowDescription, what the client gets before the rows, and the
// extended protocol's messages.
#include "session/merge_fanout.h"

#include <algorithm>

#include "common/bytes.h"
#include "merge/binary.h"
#include "session/split_bind.h"
#include "wire/message_writer.h"
#include "wire/messages.h"

namespace sw::session {
namespace {

// One RowDescription field: its name and the 18 bytes after it (table, attnum, type, typlen,
// typmod, format).
struct Field {
  std::string_view name;
  std::string_view rest;
  uint32_t type_oid = 0;
};

bool decode_fields(std::string_view body, std::vector<Field>& out) {
  if (body.size() < 2) return false;
  const size_t count =
      (static_cast<size_t>(static_cast<unsigned char>(body[0])) << 8) | static_cast<unsigned char>(body[1]);
  size_t at = 2;
  for (size_t i = 0; i < count; ++i) {
    const size_t nul = body.find('\0', at);
    if (nul == std::string_view::npos || nul + 19 > body.size()) return false;
    Field field{body.substr(at, nul - at), body.substr(nul + 1, 18), load_be32(body.data() + nul + 7)};
    out.push_back(field);
    at = nul + 19;
  }
  return at == body.size();
}

}  // namespace

void MergeFanout::use_extended(Extended extended) {
  row_limit_ = extended.max_rows;
  for (size_t i = 0; i < legs_.size(); ++i) {
    std::string& out = legs_[i].message;
    out.clear();
    wire::encode_query(out, collation_query());
    wire::encode_parse(out, "", leg_sql(i), extended.types);
    const bool replaced = i < plan_.shard_statements.size() && !plan_.shard_statements[i].params.empty();
    const std::string parameters =
        replaced ? replaced_bind_rest(extended.parameters, plan_.shard_statements[i].params)
                 : extended.parameters;
    wire::MessageWriter bind(out);
    bind.begin('B').cstr("").cstr("").bytes(parameters).int16(0).end();  // results in text
    wire::encode_target(out, 'D', 'P', "");
    wire::MessageWriter(out).begin('E').cstr("").int32(0).end();
    wire::encode_sync(out);
  }
  merger_.set_parameters(merge::decode_bind_parameters(extended.parameters, extended.types)
                             .value_or(std::vector<merge::BindParameter>{}));
  extended_ = std::move(extended);
}

// What the client gets before the rows: in the extended protocol ParseComplete and BindComplete
// first, and the RowDescription only when it sent Describe (with the format codes it asked for).
void MergeFanout::write_description(std::string_view row_description) {
  if (!extended_) {
    write_client_(row_description);
    return;
  }
  std::string out;
  if (extended_->parse_complete) wire::MessageWriter(out).begin('1').end();
  wire::MessageWriter(out).begin('2').end();
  std::vector<Field> fields;
  if (extended_->describe && !binary_columns_.empty() && decode_fields(row_description.substr(5), fields)) {
    wire::MessageWriter writer(out);
    writer.begin('T').int16(static_cast<uint16_t>(fields.size()));
    for (size_t i = 0; i < fields.size(); ++i) {
      writer.cstr(fields[i].name).bytes(fields[i].rest.substr(0, 16));
      writer.int16(i < binary_columns_.size() && binary_columns_[i] ? 1 : 0);
    }
    writer.end();
  } else if (extended_->describe) {
    out.append(row_description);
  }
  write_client_(out);
}

// The client's result formats against its column types: binary only where a conversion exists.
Status MergeFanout::plan_formats() {
  binary_columns_.clear();
  if (!extended_ || extended_->result_formats.empty()) return Status::ok();
  client_types_ = merger_.output_types();
  const auto hidden = static_cast<size_t>(plan_.hidden);
  if (plan_.kind != merge::MergeKind::Aggregate && hidden > 0 && hidden <= client_types_.size())
    client_types_.erase(client_types_.begin(), client_types_.begin() + static_cast<std::ptrdiff_t>(hidden));
  const std::vector<int>& formats = extended_->result_formats;
  if (formats.size() != 1 && formats.size() != client_types_.size())
    return Status::client("08P01", "bind message has " + std::to_string(formats.size()) +
                                       " result formats but query has " +
                                       std::to_string(client_types_.size()) + " columns");
  bool any = false;
  for (size_t i = 0; i < client_types_.size(); ++i) {
    const bool binary = (formats.size() == 1 ? formats[0] : formats[i]) != 0;
    if (binary && !merge::has_binary_form(client_types_[i]))
      return Status::client("0A000",
                            "result column " + std::to_string(i + 1) + " (type OID " +
                                std::to_string(client_types_[i]) +
                                ") of a read merged across shards has no binary form in shardwire; ask "
                                "for it in text");
    binary_columns_.push_back(binary);
    any = any || binary;
  }
  if (!any) binary_columns_.clear();
  return Status::ok();
}

Status MergeFanout::encode_row(std::string& out, const merge::Row& row) const {
  if (binary_columns_.empty()) {
    wire::encode_data_row(out, row);
    return Status::ok();
  }
  merge::Row converted = row;
  for (size_t i = 0; i < converted.size() && i < binary_columns_.size(); ++i) {
    if (!binary_columns_[i] || !converted[i]) continue;
    auto bytes = merge::to_binary(client_types_[i], *converted[i], merger_.day_first());
    if (!bytes) return bytes.status();
    converted[i] = std::move(bytes.value());
  }
  wire::encode_data_row(out, converted);
  return Status::ok();
}

// The first RowDescription: the merger learns the column types; the client gets it as is, or
// rebuilt when avg columns came from the shards as sum and count.
Status MergeFanout::describe(std::string_view frame, std::string_view body) {
  std::vector<Field> fields;
  if (!decode_fields(body, fields)) return Status::server("08P01", "a shard sent a malformed RowDescription");
  std::vector<uint32_t> types;
  std::vector<std::string> names;
  for (const Field& field : fields) {
    types.push_back(field.type_oid);
    names.emplace_back(field.name);
    if (field.rest.size() == 18)
      shard_columns_.origins.push_back(merge::ColumnOrigin{
          load_be32(field.rest.data()), static_cast<int16_t>(load_be16(field.rest.data() + 4))});
    if (field.rest.size() == 18 && (field.rest[16] != 0 || field.rest[17] != 0))
      return Status::proxy("0A000", "merged reads need text-format results");
  }
  if (Status s = merger_.describe(types, names); !s) return s;
  shard_columns_.names = names;
  described_ = true;
  if (Status s = check_collations(); !s) return s;
  if (Status s = plan_formats(); !s) return s;
  if (plan_.hidden > 0) {  // sort keys the client did not select: not its columns
    const auto hidden = static_cast<size_t>(plan_.hidden);
    if (fields.size() < hidden) return Status::server("08P01", "a shard returned fewer columns than planned");
    std::string out;
    wire::MessageWriter writer(out);
    writer.begin('T').int16(static_cast<uint16_t>(fields.size() - hidden));
    for (size_t i = hidden; i < fields.size(); ++i) writer.cstr(fields[i].name).bytes(fields[i].rest);
    writer.end();
    write_description(out);
    return Status::ok();
  }
  bool rebuilt = plan_.hidden_outputs > 0;  // HAVING's own aggregates are not the client's columns
  for (const merge::OutputColumn& out : plan_.outputs)
    rebuilt = rebuilt || out.combine == merge::Combine::Avg;
  if (!rebuilt) {
    write_description(frame);
    return Status::ok();
  }
  std::string out;
  wire::MessageWriter writer(out);
  const size_t columns = merger_.output_types().size();
  writer.begin('T').int16(static_cast<uint16_t>(columns));
  for (size_t i = 0; i < columns; ++i) {
    const merge::OutputColumn& column = plan_.outputs[i];
    const Field& source = fields[static_cast<size_t>(column.source)];
    if (column.combine != merge::Combine::Avg) {
      writer.cstr(source.name).bytes(source.rest);
      continue;
    }
    const uint32_t type = merger_.output_types()[i];
    writer.cstr(column.name).int32(0).int16(0).int32(type);
    writer.int16(type == merge::oid::kFloat8 ? 8 : 0xffff).int32(0xffffffff).int16(0);
  }
  writer.end();
  write_description(out);
  return Status::ok();
}

}  // namespace sw::session
