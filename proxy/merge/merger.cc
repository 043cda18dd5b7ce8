#include "merge/merger.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <tuple>

#include "merge/binary_array.h"
#include "merge/expression.h"
#include "merge/having.h"

namespace sw::merge {
namespace {

uint32_t read_u32(const char* p) {
  return (static_cast<uint32_t>(static_cast<unsigned char>(p[0])) << 24) |
         (static_cast<uint32_t>(static_cast<unsigned char>(p[1])) << 16) |
         (static_cast<uint32_t>(static_cast<unsigned char>(p[2])) << 8) |
         static_cast<uint32_t>(static_cast<unsigned char>(p[3]));
}

Status too_many_keys(size_t max_groups, const char* what) {
  return Status::client("54000", std::string(what) + " across shards has more than " +
                                     std::to_string(max_groups) +
                                     " distinct keys (fanout.max_groups); add a shard key value or narrow "
                                     "the query");
}

}  // namespace

std::optional<Row> decode_data_row(std::string_view body) {
  if (body.size() < 2) return std::nullopt;
  const size_t count =
      (static_cast<size_t>(static_cast<unsigned char>(body[0])) << 8) | static_cast<unsigned char>(body[1]);
  size_t at = 2;
  Row row;
  row.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    if (at + 4 > body.size()) return std::nullopt;
    const auto length = static_cast<int32_t>(read_u32(body.data() + at));
    at += 4;
    if (length < 0) {
      row.emplace_back(std::nullopt);
      continue;
    }
    if (at + static_cast<size_t>(length) > body.size()) return std::nullopt;
    row.emplace_back(std::string(body.substr(at, static_cast<size_t>(length))));
    at += static_cast<size_t>(length);
  }
  if (at != body.size()) return std::nullopt;
  return row;
}

Merger::Merger(MergePlan plan, size_t legs, size_t max_groups)
    : plan_(std::move(plan)), max_groups_(max_groups), legs_(legs) {}

Status Merger::describe(std::vector<uint32_t> shard_types, const std::vector<std::string>& names) {
  shard_types_ = std::move(shard_types);
  auto column_name = [&](int i) {
    return static_cast<size_t>(i) < names.size() ? names[static_cast<size_t>(i)] : std::to_string(i + 1);
  };
  if (plan_.kind == MergeKind::Aggregate) {
    output_types_.clear();
    key_sources_.clear();
    for (const OutputColumn& out : plan_.outputs) {
      const int needed = out.source + shard_columns(out) - 1;
      if (needed >= static_cast<int>(shard_types_.size()))
        return Status::proxy("XX000", "the shards returned fewer columns than the scatter plan expects");
      for (const SortKey& key : out.within) {
        const uint32_t element = array_element_type(shard_types_[static_cast<size_t>(key.column)]);
        if (!is_comparable_type(element))
          return Status::client("0A000", "the ORDER BY of " + out.name +
                                             "() has a type shardwire cannot order across shards; order "
                                             "by a built-in scalar type, or add a shard key value");
      }
      auto type = combined_type(out.combine, shard_types_[static_cast<size_t>(out.source)]);
      if (!type) return type.status();
      output_types_.push_back(*type);
      if (out.combine == Combine::Key) key_sources_.push_back(out.source);
    }
    if (Status s = type_expressions(); !s) return s;
    having_types_ = output_types_;
    const auto hidden = static_cast<size_t>(std::max(plan_.hidden_outputs, 0));
    output_types_.resize(output_types_.size() - std::min(hidden, output_types_.size()));
  } else {
    output_types_ = shard_types_;
  }
  for (SortKey& key : plan_.order_by) {
    if (key.column < 0) {
      for (size_t i = 0; i < names.size(); ++i) {
        if (names[i] != key.name) continue;
        if (key.column >= 0)
          return Status::client("0A000",
                                "ORDER BY \"" + key.name +
                                    "\" matches several columns of the shards' rows; name the column "
                                    "once in the select list");
        key.column = static_cast<int>(i);
      }
      if (key.column < 0)
        return Status::client("0A000", "ORDER BY \"" + key.name +
                                           "\" is not a column of the result; select it to order rows "
                                           "across shards");
    }
    if (key.column >= static_cast<int>(sort_types().size()))
      return Status::proxy("XX000", "ORDER BY column out of range in the scatter plan");
    const uint32_t type = sort_types()[static_cast<size_t>(key.column)];
    if (!is_comparable_type(type)) {
      return Status::client("0A000", "ORDER BY column \"" + column_name(key.column) + "\" has a type (OID " +
                                         std::to_string(type) +
                                         ") shardwire cannot order across shards; order by a "
                                         "column of a built-in scalar type, or add a shard key value");
    }
  }
  compared_text_ = compared_text_columns(plan_, shard_types_);
  for (const auto& [number, count, limit] : {std::tuple{plan_.limit_param, &plan_.limit, true},
                                             std::tuple{plan_.offset_param, &plan_.offset, false}}) {
    if (number == 0) continue;
    auto value = count_parameter(parameters_, number, limit);
    if (!value) return value.status();
    *count = value.value();
  }
  if (plan_.having) return bind_having_parameters(*plan_.having, parameters_, having_types_);
  return Status::ok();
}

Result<Merger::Entry> Merger::make_entry(Row row) const {
  Entry entry;
  for (const SortKey& key : plan_.order_by) {
    const auto& value = row[static_cast<size_t>(key.column)];
    entry.nulls.push_back(!value.has_value());
    if (!value) {
      entry.keys.emplace_back();
      continue;
    }
    auto decoded = decode_text(sort_types()[static_cast<size_t>(key.column)], *value, dates_);
    if (!decoded) return decoded.status();
    entry.keys.push_back(std::move(decoded.value()));
  }
  entry.row = std::move(row);
  return entry;
}

// PostgreSQL's ORDER BY: per key ASC/DESC, NULLs first or last as the key says.
int Merger::compare(const Entry& a, const Entry& b, size_t keys) const {
  for (size_t i = 0; i < plan_.order_by.size() && i < keys; ++i) {
    const SortKey& key = plan_.order_by[i];
    int c = 0;
    if (a.nulls[i] || b.nulls[i]) {
      if (a.nulls[i] == b.nulls[i]) continue;
      c = a.nulls[i] ? 1 : -1;  // NULL after values ...
      if (key.nulls_first) c = -c;
      return c;  // ... independent of direction
    }
    c = a.keys[i].compare(b.keys[i]);
    if (key.descending) c = -c;
    if (c != 0) return c;
  }
  return 0;
}

Status Merger::push(size_t leg, Row row) {
  ++rows_in_;
  if (row.size() != shard_types_.size())
    return Status::server("08P01", "a shard sent a row whose column count differs from its description");
  if (plan_.kind == MergeKind::Aggregate && !plan_.stream_groups) return add_to_group(row);
  if (plan_.kind == MergeKind::Aggregate) {
    auto entry = make_group_entry(std::move(row));
    if (!entry) return entry.status();
    legs_[leg].rows.push_back(std::move(entry.value()));
    return Status::ok();
  }
  if (plan_.kind == MergeKind::Concat) {
    legs_[leg].rows.push_back(Entry{std::move(row), {}, {}});
    return Status::ok();
  }
  auto entry = make_entry(std::move(row));
  if (!entry) return entry.status();
  legs_[leg].rows.push_back(std::move(entry.value()));
  return Status::ok();
}

Result<std::string> Merger::canonical_key(const Row& row, const std::vector<int>& columns,
                                          const std::vector<uint32_t>& types) const {
  std::string key;
  for (int c : columns) {
    const auto& value = row[static_cast<size_t>(c)];
    if (!value) {
      key += '\x01';
      continue;
    }
    const uint32_t type = types[static_cast<size_t>(c)];
    std::string part;
    if (is_comparable_type(type)) {
      auto decoded = decode_text(type, *value, dates_);
      if (!decoded) return decoded.status();
      part = decoded->canonical();
    } else {
      part = *value;  // types without a decoder: equal when their text is
    }
    key += '\x02';
    key += std::to_string(part.size());
    key += ':';
    key += part;
  }
  return key;
}

Status Merger::add_to_group(const Row& row) {
  auto key = canonical_key(row, key_sources_, shard_types_);
  if (!key) return key.status();
  auto [it, inserted] = group_index_.try_emplace(std::move(key.value()), groups_.size());
  if (inserted) {
    if (groups_.size() >= max_groups_) return too_many_keys(max_groups_, "GROUP BY");
    groups_.push_back(new_group(row));
  }
  return accumulate(groups_[it->second], row);
}

Merger::Group Merger::new_group(const Row& row) const {
  Group group;
  for (const OutputColumn& out : plan_.outputs) {
    group.keys.push_back(out.combine == Combine::Key ? row[static_cast<size_t>(out.source)] : std::nullopt);
    group.accumulators.push_back(new_accumulator(out));
  }
  return group;
}

Accumulator Merger::new_accumulator(const OutputColumn& out) const {
  Accumulator accumulator(out.combine, shard_types_[static_cast<size_t>(out.source)], dates_);
  accumulator.set_budget(distinct_budget_.get());
  if (out.combine == Combine::ArrayAgg || out.combine == Combine::StringAgg) {
    std::vector<uint32_t> key_types;
    for (const SortKey& key : out.within)
      key_types.push_back(array_element_type(shard_types_[static_cast<size_t>(key.column)]));
    accumulator.set_order(out, std::move(key_types));
  }
  return accumulator;
}

Status Merger::accumulate(Group& group, const Row& row) const {
  for (size_t i = 0; i < plan_.outputs.size(); ++i) {
    const OutputColumn& out = plan_.outputs[i];
    const auto source = static_cast<size_t>(out.source);
    static const std::optional<std::string> kNone;
    if (out.combine == Combine::ArrayAgg || out.combine == Combine::StringAgg) {
      const std::span<const std::optional<std::string>> arrays(row.data() + source,
                                                               static_cast<size_t>(shard_columns(out)));
      if (Status s = group.accumulators[i].add_ordered(arrays); !s) return s;
      continue;
    }
    const int width = partial_columns(out.combine);
    const auto& count = width > 1 ? row[source + 1] : kNone;
    Status s = width == 4
                   ? group.accumulators[i].add_variance(row[source], count, row[source + 2], row[source + 3])
                   : group.accumulators[i].add(row[source], count);
    if (!s) return s;
  }
  return Status::ok();
}

Status Merger::finish_leg(size_t leg) {
  legs_[leg].finished = true;
  return Status::ok();
}

Status Merger::finalize_groups() {
  finalized_ready_ = true;
  // An aggregate without GROUP BY answers one row even when no shard had rows.
  if (groups_.empty() && key_sources_.empty() && plan_.kind == MergeKind::Aggregate) {
    Group group;
    for (const OutputColumn& out : plan_.outputs) {
      group.keys.emplace_back(std::nullopt);
      group.accumulators.push_back(new_accumulator(out));
    }
    groups_.push_back(std::move(group));
  }
  std::vector<Entry> rows;
  rows.reserve(groups_.size());
  for (Group& group : groups_) {
    auto row = group_row(group);
    if (!row) return row.status();
    if (!row->has_value()) continue;
    auto entry = make_entry(std::move(**row));
    if (!entry) return entry.status();
    rows.push_back(std::move(entry.value()));
  }
  groups_.clear();
  group_index_.clear();
  if (!plan_.order_by.empty()) {
    std::stable_sort(rows.begin(), rows.end(),
                     [this](const Entry& a, const Entry& b) { return compare(a, b) < 0; });
  }
  for (Entry& entry : rows) {
    entry.row.resize(output_types_.size());  // sorted: hidden outputs are not the client's
    finalized_.push_back(std::move(entry));
  }
  return Status::ok();
}

// A final group as a row of every output (hidden ones last); nullopt when HAVING does not hold
// for it. As in PostgreSQL, expressions HAVING does not compare are computed only for the groups
// it keeps (an error in a dropped group's is not raised).
Result<std::optional<Row>> Merger::group_row(Group& group) const {
  Row row;
  for (size_t i = 0; i < plan_.outputs.size(); ++i) {
    if (Status s = group.accumulators[i].finish(); !s) return s;
    row.push_back(plan_.outputs[i].combine == Combine::Key ? std::move(group.keys[i])
                                                           : group.accumulators[i].result());
  }
  if (Status s = compute_expressions(row, true); !s) return s;
  if (plan_.having) {
    auto keep = evaluate_having(*plan_.having, row, having_types_, dates_);
    if (!keep) return keep.status();
    if (!keep->value_or(false)) return std::optional<Row>();
  }
  if (Status s = compute_expressions(row, false); !s) return s;
  return std::optional<Row>(std::move(row));
}

Status Merger::type_expressions() {
  for (size_t i = 0; i < plan_.outputs.size(); ++i) {
    const OutputColumn& out = plan_.outputs[i];
    if (out.combine != Combine::Expression) continue;
    if (!out.expression) return Status::proxy("XX000", "an expression column without its expression");
    auto type = expression_type(*out.expression, output_types_, parameters_);
    if (!type) return type.status();
    const bool hidden = i + static_cast<size_t>(std::max(plan_.hidden_outputs, 0)) >= plan_.outputs.size();
    const uint32_t shard_type = shard_types_[static_cast<size_t>(out.source)];
    if (!hidden && *type != shard_type)  // PostgreSQL's own typing of the expression, from the shards
      return Status::client("0A000", "an expression over aggregates of a read merged across shards (\"" +
                                         out.name + "\") is typed " + type_name(shard_type) +
                                         " by PostgreSQL, which shardwire does not compute; select the "
                                         "aggregates themselves");
    output_types_[i] = *type;
  }
  std::vector<int> columns;
  if (plan_.having) having_columns(*plan_.having, columns);
  expression_in_having_.assign(plan_.outputs.size(), false);
  for (int column : columns) {
    if (column >= 0 && static_cast<size_t>(column) < expression_in_having_.size())
      expression_in_having_[static_cast<size_t>(column)] = true;
  }
  return Status::ok();
}

Status Merger::compute_expressions(Row& row, bool for_having) const {
  for (size_t i = 0; i < plan_.outputs.size(); ++i) {
    const OutputColumn& out = plan_.outputs[i];
    if (out.combine != Combine::Expression || !out.expression) continue;
    if ((i < expression_in_having_.size() && expression_in_having_[i]) != for_having) continue;
    auto value = evaluate_expression(*out.expression, row, having_types_, parameters_);
    if (!value) return value.status();
    row[i] = std::move(value.value());
  }
  return Status::ok();
}

bool Merger::repeats_distinct_on(const Entry& entry) {
  const auto keys = static_cast<size_t>(plan_.distinct_on);
  if (last_on_ && compare(*last_on_, entry, keys) == 0) return true;
  last_on_ = Entry{{}, entry.keys, entry.nulls};
  return false;
}

Result<bool> Merger::admit(const Row& row) {
  if (plan_.distinct) {
    std::vector<int> all(row.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    auto key = canonical_key(row, all, output_types_);
    if (!key) return key.status();
    if (!seen_.insert(std::move(key.value())).second) return false;
    if (seen_.size() > max_groups_) return too_many_keys(max_groups_, "DISTINCT");
  }
  if (skipped_ < plan_.offset) {
    ++skipped_;
    return false;
  }
  ++emitted_;
  return true;
}

bool Merger::done() const {
  if (plan_.limit >= 0 && emitted_ >= plan_.limit) return true;
  for (const LegRows& leg : legs_) {
    if (!leg.finished || !leg.rows.empty()) return false;
  }
  if (plan_.stream_groups) return !open_group_;
  return plan_.kind != MergeKind::Aggregate || (finalized_ready_ && finalized_.empty());
}

bool Merger::waiting_for(size_t leg) const {
  if (plan_.kind == MergeKind::Aggregate && !plan_.stream_groups) return !legs_[leg].finished;
  return !legs_[leg].finished && legs_[leg].rows.empty();
}

Result<std::optional<Row>> Merger::next() {
  while (!(plan_.limit >= 0 && emitted_ >= plan_.limit)) {
    Entry* best = nullptr;
    LegRows* from = nullptr;
    if (plan_.stream_groups) return next_streamed_group();
    if (plan_.kind == MergeKind::Aggregate) {
      for (const LegRows& leg : legs_) {
        if (!leg.finished) return std::optional<Row>();
      }
      if (!finalized_ready_) {
        if (Status s = finalize_groups(); !s) return s;
      }
      if (finalized_.empty()) return std::optional<Row>();
      Entry entry = std::move(finalized_.front());
      finalized_.pop_front();
      auto admitted = admit(entry.row);
      if (!admitted) return admitted.status();
      if (*admitted) return std::optional<Row>(std::move(entry.row));
      continue;
    }
    for (LegRows& leg : legs_) {
      if (leg.rows.empty()) {
        if (!leg.finished && plan_.kind == MergeKind::MergeSort) return std::optional<Row>();
        continue;
      }
      if (best == nullptr || (plan_.kind == MergeKind::MergeSort && compare(leg.rows.front(), *best) < 0)) {
        best = &leg.rows.front();
        from = &leg;
      }
      if (plan_.kind == MergeKind::Concat) break;
    }
    if (best == nullptr) return std::optional<Row>();
    if (plan_.distinct_on > 0 && repeats_distinct_on(*best)) {
      from->rows.pop_front();
      continue;
    }
    Row row = std::move(best->row);
    from->rows.pop_front();
    auto admitted = admit(row);
    if (!admitted) return admitted.status();
    if (!*admitted) continue;
    const auto hidden = static_cast<size_t>(std::max(plan_.hidden, 0));
    row.erase(row.begin(), row.begin() + static_cast<std::ptrdiff_t>(std::min(hidden, row.size())));
    return std::optional<Row>(std::move(row));
  }
  return std::optional<Row>();
}

}  // namespace sw::merge
