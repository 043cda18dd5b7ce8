// A result set the console sends: columns declared once per table (a static array), rows of text
// values, encoded as RowDescription, DataRows and CommandComplete.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sw::admin {

enum class ColumnType : uint32_t { Bool = 16, Int8 = 20, Int4 = 23, Text = 25, Float8 = 701 };

struct Column {
  std::string_view name;
  ColumnType type;
};

using Value = std::optional<std::string>;  // nullopt is SQL NULL
inline Value text(std::string s) { return Value(std::move(s)); }
inline Value number(int64_t n) { return Value(std::to_string(n)); }
inline Value number(uint64_t n) { return Value(std::to_string(n)); }
inline Value number(int n) { return Value(std::to_string(n)); }
Value decimal(double d);           // fixed, 3 decimals
Value timestamp(int64_t unix_us);  // "YYYY-MM-DD HH:MM:SS UTC", NULL for 0

class ResultTable {
 public:
  explicit ResultTable(std::span<const Column> columns, std::string tag = "SHOW")
      : columns_(columns), tag_(std::move(tag)) {}

  // A row must have exactly one value per column (a mismatch is a bug; encode() reports it).
  void add(std::vector<Value> row) { rows_.push_back(std::move(row)); }
  size_t size() const { return rows_.size(); }
  const std::vector<Value>& row(size_t i) const { return rows_[i]; }
  std::span<const Column> columns() const { return columns_; }

  // RowDescription + DataRow* + CommandComplete; an ErrorResponse instead if a row is malformed.
  std::string encode() const;

 private:
  std::span<const Column> columns_;
  std::string tag_;
  std::vector<std::vector<Value>> rows_;
};

// A command with no result set ("PAUSE", "RELOAD", ...).
std::string command_complete(std::string_view tag);
std::string error(std::string_view sqlstate, std::string_view message, std::string_view hint = {});

}  // namespace sw::admin
