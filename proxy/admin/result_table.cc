#include "admin/result_table.h"

#include <cstdio>
#include <ctime>

#include "wire/messages.h"
#include "wire/row_description.h"

namespace sw::admin {

Value decimal(double d) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.3f", d);
  return Value(buffer);
}

Value timestamp(int64_t unix_us) {
  if (unix_us == 0) return std::nullopt;
  time_t seconds = static_cast<time_t>(unix_us / 1000000);
  struct tm utc {};
  gmtime_r(&seconds, &utc);
  char buffer[64];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M:%S UTC", &utc);
  return Value(buffer);
}

std::string ResultTable::encode() const {
  std::string out;
  for (const auto& row : rows_) {
    if (row.size() != columns_.size())
      return error("XX000", "internal error: a row of the result has " + std::to_string(row.size()) +
                                " values for " + std::to_string(columns_.size()) + " columns");
  }
  std::vector<wire::RowField> description;
  for (const auto& column : columns_)
    description.push_back(wire::computed_column(column.name, static_cast<uint32_t>(column.type)));
  wire::encode_row_description(out, description);
  for (const auto& row : rows_) wire::encode_data_row(out, row);
  wire::encode_command_complete(out, tag_ == "SELECT" ? "SELECT " + std::to_string(rows_.size()) : tag_);
  return out;
}

std::string command_complete(std::string_view tag) {
  std::string out;
  wire::encode_command_complete(out, tag);
  return out;
}

std::string error(std::string_view sqlstate, std::string_view message, std::string_view hint) {
  std::string out;
  wire::encode_error(out, "ERROR", sqlstate, message, {}, hint);
  return out;
}

}  // namespace sw::admin
