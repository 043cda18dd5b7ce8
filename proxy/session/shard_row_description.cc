#include "session/shard_row_description.h"

#include <algorithm>

#include "merge/value.h"

namespace sw::session {

Result<ShardRowDescription> read_shard_row_description(std::string_view body, merge::ShardColumns* columns) {
  auto decoded = wire::decode_row_description(body);
  if (!decoded) return Status::server("08P01", "a shard sent a malformed RowDescription");
  ShardRowDescription out;
  out.fields = std::move(*decoded);
  for (const wire::RowField& field : out.fields) {
    out.types.push_back(field.type_oid);
    out.names.emplace_back(field.name);
    columns->origins.push_back(merge::ColumnOrigin{field.table_oid, field.column});
    if (field.format != 0) return Status::proxy("0A000", "merged reads need text-format results");
  }
  return out;
}

bool rebuilt_columns(const merge::MergePlan& plan) {
  if (plan.kind != merge::MergeKind::Aggregate) return false;
  bool rebuilt = plan.hidden_outputs > 0;
  for (const merge::OutputColumn& out : plan.outputs) rebuilt = rebuilt || merge::merge_describes(out);
  return rebuilt;
}

std::string rebuilt_row_description(const std::vector<wire::RowField>& fields, const merge::MergePlan& plan,
                                    const std::vector<uint32_t>& output_types) {
  std::vector<wire::RowField> columns;
  for (size_t i = 0; i < output_types.size() && i < plan.outputs.size(); ++i) {
    const merge::OutputColumn& column = plan.outputs[i];
    if (!merge::merge_describes(column)) {
      columns.push_back(fields[static_cast<size_t>(column.source)]);
      continue;
    }
    wire::RowField computed;  // avg, a variance, ...: computed by the proxy, no table column
    computed.name = column.name;
    computed.type_oid = output_types[i];
    computed.type_size = computed.type_oid == merge::oid::kFloat8 || computed.type_oid == merge::oid::kInt8
                             ? 8
                         : computed.type_oid == merge::oid::kFloat4 ? 4
                                                                    : -1;
    columns.push_back(computed);
  }
  std::string out;
  wire::encode_row_description(out, columns);
  return out;
}

Result<std::string> without_hidden_columns(const std::vector<wire::RowField>& fields,
                                           const merge::MergePlan& plan) {
  const auto hidden = static_cast<size_t>(std::max(plan.hidden, 0));  // MergeSort/Concat only
  if (fields.size() < hidden) return Status::server("08P01", "a shard returned fewer columns than planned");
  std::string out;
  wire::encode_row_description(
      out, std::vector<wire::RowField>(fields.begin() + static_cast<std::ptrdiff_t>(hidden), fields.end()));
  return out;
}

}  // namespace sw::session
