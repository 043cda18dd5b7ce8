// Streamed GROUP BY (plan.stream_groups): every shard returns its groups sorted by exactly the
// group keys, so a k-way merge of the shards' group rows meets the rows of one key one after
// another; each group is combined, checked against HAVING and sent before the next one starts,
// and the merger holds one group instead of all of them (no fanout.max_groups bound applies).
#include "merge/merger.h"

namespace sw::merge {

Result<Merger::Entry> Merger::make_group_entry(Row row) const {
  Entry entry;
  for (const SortKey& key : plan_.order_by) {
    const auto column = static_cast<size_t>(key.column);
    const auto& value = row[static_cast<size_t>(plan_.outputs[column].source)];
    entry.nulls.push_back(!value.has_value());
    if (!value) {
      entry.keys.emplace_back();
      continue;
    }
    auto decoded = decode_text(output_types_[column], *value, dates_);
    if (!decoded) return decoded.status();
    entry.keys.push_back(std::move(decoded.value()));
  }
  entry.row = std::move(row);
  return entry;
}

Result<std::optional<Row>> Merger::next_streamed_group() {
  while (!(plan_.limit >= 0 && emitted_ >= plan_.limit)) {
    LegRows* from = nullptr;
    for (LegRows& leg : legs_) {
      if (leg.rows.empty()) {
        if (!leg.finished) return std::optional<Row>();  // its next group may sort first
        continue;
      }
      if (from == nullptr || compare(leg.rows.front(), from->rows.front()) < 0) from = &leg;
    }
    if (from != nullptr && open_group_ && compare(from->rows.front(), open_keys_) == 0) {
      if (Status s = accumulate(*open_group_, from->rows.front().row); !s) return s;
      from->rows.pop_front();
      continue;
    }
    if (open_group_) {  // the next row starts another group, or every shard finished
      Group group = std::move(*open_group_);
      open_group_.reset();
      auto row = group_row(group);
      if (!row) return row.status();
      if (!row->has_value()) continue;
      (*row)->resize(output_types_.size());  // hidden outputs are not the client's
      auto admitted = admit(**row);
      if (!admitted) return admitted.status();
      if (*admitted) return std::move(row.value());
      continue;
    }
    if (from == nullptr) return std::optional<Row>();  // every shard finished: done()
    Entry& first = from->rows.front();
    open_group_ = new_group(first.row);
    open_keys_.keys = first.keys;
    open_keys_.nulls = first.nulls;
    if (Status s = accumulate(*open_group_, first.row); !s) return s;
    from->rows.pop_front();
  }
  return std::optional<Row>();
}

}  // namespace sw::merge
