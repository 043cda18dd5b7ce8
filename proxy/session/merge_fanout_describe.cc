// MergeFanout: the shards' RowDescription, what the client gets before the rows, and the
// extended protocol's messages.
#include "session/merge_fanout.h"

#include <algorithm>

#include "merge/binary.h"
#include "session/shard_row_description.h"
#include "session/split_bind.h"
#include "wire/message_writer.h"
#include "wire/messages.h"
#include "wire/row_description.h"

namespace sw::session {

void MergeFanout::use_extended(Extended extended) {
  row_limit_ = extended.max_rows;
  for (size_t i = 0; i < messages_.size(); ++i) {
    std::string& out = messages_[i];
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
  if (extended_->describe && !binary_columns_.empty()) {
    auto fields = wire::decode_row_description(row_description.substr(5));
    if (fields) {
      for (size_t i = 0; i < fields->size(); ++i)
        (*fields)[i].format = i < binary_columns_.size() && binary_columns_[i] ? 1 : 0;
      wire::encode_row_description(out, *fields);
    } else {
      out.append(row_description);
    }
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
    auto bytes = merge::to_binary(client_types_[i], *converted[i], merger_.dates());
    if (!bytes) return bytes.status();
    converted[i] = std::move(bytes.value());
  }
  wire::encode_data_row(out, converted);
  return Status::ok();
}

// The first RowDescription: the merger learns the column types; the client gets it as is, or
// rebuilt when avg columns came from the shards as sum and count.
Status MergeFanout::describe(std::string_view frame, std::string_view body) {
  auto described = read_shard_row_description(body, &shard_columns_);
  if (!described) return described.status();
  const std::vector<wire::RowField>& fields = described->fields;
  if (Status s = merger_.describe(described->types, described->names); !s) return s;
  shard_columns_.names = described->names;
  described_ = true;
  if (Status s = check_collations(); !s) return s;
  if (Status s = plan_formats(); !s) return s;
  if (plan_.hidden > 0) {  // sort keys the client did not select: not its columns
    auto client = without_hidden_columns(fields, plan_);
    if (!client) return client.status();
    write_description(client.value());
    return Status::ok();
  }
  if (!rebuilt_columns(plan_)) {
    write_description(frame);
    return Status::ok();
  }
  write_description(rebuilt_row_description(fields, plan_, merger_.output_types()));
  return Status::ok();
}

}  // namespace sw::session
