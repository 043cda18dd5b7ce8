// SplitAnswer: a split INSERT's part answers combined into one (docs/architecture.md §5.11).
#include "session/split_answer.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include "wire/messages.h"

namespace sw::session {
namespace {

// The row count of an INSERT tag (`INSERT oid n`); -1 when it is not one.
long long inserted_count(std::string_view tag) {
  if (tag.substr(0, 7) != "INSERT ") return -1;
  const size_t space = tag.rfind(' ');
  long long count = -1;
  const std::string_view digits = tag.substr(space + 1);
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
  if (error != std::errc() || end != digits.data() + digits.size()) return -1;
  return count;
}

}  // namespace

SplitAnswer::SplitAnswer(std::vector<int> row_part, bool row_by_row)
    : row_part_(std::move(row_part)), row_by_row_(row_by_row) {
  size_t parts = 0;
  for (int part : row_part_) parts = std::max(parts, static_cast<size_t>(part) + 1);
  part_rows_.assign(parts, 0);
  for (int part : row_part_) ++part_rows_[static_cast<size_t>(part)];
  returned_.resize(parts);
  completed_.resize(parts);
}

Status SplitAnswer::on_row_description(size_t part, std::string_view frame) {
  if (part >= returned_.size()) return Status::proxy("XX000", "a split INSERT answer for an unknown part");
  if (row_description_.empty()) row_description_.assign(frame);
  return Status::ok();
}

Status SplitAnswer::on_data_row(size_t part, std::string_view frame) {
  if (part >= returned_.size()) return Status::proxy("XX000", "a split INSERT answer for an unknown part");
  if (held_ + frame.size() > kMaxHeldBytes) {
    return Status::client("54000", "the RETURNING rows of an INSERT split over several shards are over " +
                                       std::to_string(kMaxHeldBytes >> 20) +
                                       " MiB, which shardwire holds until every shard answered; the INSERT "
                                       "was rolled back on every shard (RETURNING fewer columns, or insert "
                                       "fewer rows per statement)");
  }
  held_ += frame.size();
  returned_[part].emplace_back(frame);
  return Status::ok();
}

Status SplitAnswer::on_command_complete(size_t part, std::string_view tag) {
  if (part >= returned_.size()) return Status::proxy("XX000", "a split INSERT answer for an unknown part");
  const long long count = inserted_count(tag);
  if (count < 0)
    return Status::server("08P01",
                          "a shard answered its part of a split INSERT with '" + std::string(tag) + "'");
  completed_[part].push_back(returned_[part].size());
  inserted_ += count;
  return Status::ok();
}

Result<std::string> SplitAnswer::combine() const {
  if (row_by_row_) return combine_row_by_row();
  for (size_t part = 0; part < returned_.size(); ++part) {
    if (completed_[part].size() != 1)
      return Status::proxy("XX000", "a part of a split INSERT did not complete");
    const size_t got = returned_[part].size();
    if (got != 0 && got != part_rows_[part]) {
      return Status::client(
          "0A000",
          "an INSERT split over several shards returned RETURNING rows for only some of its VALUES rows on "
          "one shard (a WHERE of ON CONFLICT DO UPDATE or a trigger skipped a row), so shardwire cannot "
          "return them in the order of the VALUES rows; the INSERT was rolled back on every shard (insert "
          "the rows of each tenant in its own statement, or drop RETURNING)");
    }
  }
  std::string out = row_description_;
  std::vector<size_t> next(returned_.size(), 0);
  for (int part : row_part_) {
    const auto index = static_cast<size_t>(part);
    if (returned_[index].empty()) continue;
    out += returned_[index][next[index]++];
  }
  wire::encode_command_complete(out, "INSERT 0 " + std::to_string(inserted_));
  return out;
}

// Row by row: the k-th INSERT of a part is its k-th VALUES row, its rows [ends[k-1], ends[k]).
Result<std::string> SplitAnswer::combine_row_by_row() const {
  for (size_t part = 0; part < returned_.size(); ++part) {
    if (completed_[part].size() != part_rows_[part])
      return Status::proxy("XX000", "a part of a split INSERT did not answer each of its rows");
  }
  std::string out = row_description_;
  std::vector<size_t> next(returned_.size(), 0);
  for (int part : row_part_) {
    const auto index = static_cast<size_t>(part);
    const std::vector<size_t>& ends = completed_[index];
    const size_t k = next[index]++;
    for (size_t row = k == 0 ? 0 : ends[k - 1]; row < ends[k]; ++row) out += returned_[index][row];
  }
  wire::encode_command_complete(out, "INSERT 0 " + std::to_string(inserted_));
  return out;
}

}  // namespace sw::session
