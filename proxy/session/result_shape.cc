#include "session/result_shape.h"

#include <cstring>
#include <utility>

#include "merge/value.h"

namespace sw::session {
namespace {

std::string type_label(uint32_t type_oid) {
  const char* name = merge::type_name(type_oid);
  if (std::strcmp(name, "this type") == 0) return "type OID " + std::to_string(type_oid);
  return name;
}

std::string columns(size_t n) { return std::to_string(n) + (n == 1 ? " column" : " columns"); }

Status mismatch(const std::string& difference) {
  return Status::server(std::string(kShapeMismatchState),
                        "the shards answered with different result columns: " + difference +
                            " (the table differs between shards; make its definition the same on "
                            "every shard)");
}

// "<column> is <a> on shard <shard> and <b> on shard <reference>".
Status column_differs(const std::string& column, std::string_view a, std::string_view shard,
                      std::string_view b, std::string_view reference_shard) {
  std::string out = column;
  out.append(" is ").append(a).append(" on shard ").append(shard);
  out.append(" and ").append(b).append(" on shard ").append(reference_shard);
  return mismatch(out);
}

std::string quoted(std::string_view name) {
  std::string out = "\"";
  out.append(name).append("\"");
  return out;
}

const char* format_label(int16_t format) { return format == 0 ? "text" : "binary"; }

}  // namespace

Status compare_result_columns(std::string_view reference_shard, const std::vector<wire::RowField>& reference,
                              std::string_view shard, const std::vector<wire::RowField>& fields) {
  if (fields.size() != reference.size()) {
    std::string out = "shard ";
    out.append(shard).append(" returned ").append(columns(fields.size()));
    out.append(" where shard ")
        .append(reference_shard)
        .append(" returned ")
        .append(std::to_string(reference.size()));
    return mismatch(out);
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    const wire::RowField& a = fields[i];
    const wire::RowField& b = reference[i];
    std::string column = "column " + std::to_string(i + 1);
    if (a.name != b.name)
      return column_differs(column, quoted(a.name), shard, quoted(b.name), reference_shard);
    column.append(" ").append(quoted(b.name));
    if (a.type_oid != b.type_oid)
      return column_differs(column, type_label(a.type_oid), shard, type_label(b.type_oid), reference_shard);
    if (a.format != b.format)
      return column_differs(column, format_label(a.format), shard, format_label(b.format), reference_shard);
  }
  return Status::ok();
}

Status copy_columns_mismatch(std::string_view reference_shard, size_t reference_columns,
                             std::string_view shard, size_t n) {
  std::string out = "shard ";
  out.append(shard).append(" copied ").append(columns(n));
  out.append(" where shard ")
      .append(reference_shard)
      .append(" copied ")
      .append(std::to_string(reference_columns));
  return mismatch(out);
}

Status ResultShape::check(size_t leg, std::string_view shard, std::string_view body) {
  if (!known_) {
    body_.assign(body);
    auto decoded = wire::decode_row_description(body_);
    if (!decoded)
      return Status::server("08P01", "shard " + std::string(shard) + " sent a malformed RowDescription");
    fields_ = std::move(*decoded);
    shard_.assign(shard);
    leg_ = leg;
    known_ = true;
    return Status::ok();
  }
  auto decoded = wire::decode_row_description(body);
  if (!decoded)
    return Status::server("08P01", "shard " + std::string(shard) + " sent a malformed RowDescription");
  if (leg < leg_) return compare_result_columns(shard, *decoded, shard_, fields_);
  return compare_result_columns(shard_, fields_, shard, *decoded);
}

}  // namespace sw::session
