#include "session/merged_cursor.h"

#include <algorithm>
#include <charconv>

#include "session/cursor_statement.h"
#include "session/shard_row_description.h"
#include "session/split_bind.h"
#include "wire/message_writer.h"
#include "wire/messages.h"
#include "wire/row_description.h"

namespace sw::session {
namespace {

// The row count of a "FETCH n" tag; -1 when it is no such tag.
int64_t fetched_rows(std::string_view body) {
  std::string_view tag = body.substr(0, body.find('\0'));
  if (tag.rfind("FETCH ", 0) != 0) return -1;
  int64_t n = -1;
  auto [end, error] = std::from_chars(tag.data() + 6, tag.data() + tag.size(), n);
  return error == std::errc() && end == tag.data() + tag.size() ? n : -1;
}

}  // namespace

MergedCursor::MergedCursor(std::string name, std::vector<int> shards, merge::MergePlan plan,
                           const config::Fanout& limits, bool hold, bool scroll)
    : name_(std::move(name)),
      hold_(hold),
      shards_(std::move(shards)),
      plan_(std::move(plan)),
      merger_(plan_, shards_.size(), static_cast<size_t>(limits.max_groups)),
      max_rows_buffered_(std::max<int64_t>(1, limits.max_rows_buffered)),
      phase_(shards_.size(), 0),
      collations_(shards_.size()) {
  merger_.set_max_distinct_values(static_cast<size_t>(limits.max_distinct_values));
  if (scroll) scroll_.emplace(limits.max_scroll_bytes);
}

std::string MergedCursor::declare_messages(size_t leg, const Parameters* parameters) const {
  const bool split = !plan_.shard_statements.empty();
  const std::string& sql = split ? plan_.shard_statements[leg].sql : plan_.shard_sql;
  const std::string name = quoted_name(name_);
  const std::string declare =
      "DECLARE " + name + " NO SCROLL CURSOR" + (hold_ ? " WITH HOLD" : "") + " FOR " + sql;
  const std::string fetch = "FETCH 0 FROM " + name;
  std::string out;
  if (parameters == nullptr) {
    wire::encode_query(out, merge::shard_collations_query(plan_.tables) + declare + ";\n" + fetch);
    return out;
  }
  wire::encode_query(out, merge::shard_collations_query(plan_.tables));
  wire::encode_parse(out, "", declare, parameters->types);
  const bool replaced = split && !plan_.shard_statements[leg].params.empty();
  const std::string values = replaced
                                 ? replaced_bind_rest(parameters->values, plan_.shard_statements[leg].params)
                                 : parameters->values;
  wire::MessageWriter(out).begin('B').cstr("").cstr("").bytes(values).int16(0).end();
  wire::encode_execute(out, "", 0);
  wire::encode_sync(out);
  wire::encode_query(out, fetch);
  return out;
}

Status MergedCursor::take_declared(size_t leg, std::string_view shard, char type, std::string_view body) {
  int& phase = phase_[leg];
  if (phase == 0) {  // the collations query
    if (type == 'D') {
      auto row = merge::decode_data_row(body);
      std::optional<merge::ShardCollations> collations;
      if (row && row->size() == 3)
        collations = merge::parse_shard_collations((*row)[0], (*row)[1], (*row)[2]);
      if (!collations) return Status::server("08P01", "a shard answered the collation query malformed");
      collations_[leg] = std::move(*collations);
    } else if (type == 'C') {
      phase = 1;
    }
    return Status::ok();
  }
  if (type == 'T' && phase == 2) {
    // The first shard's columns describe every shard's rows: the others must match them.
    if (Status same = shape_.check(leg, shard, body); !same) return same;
    if (described_) return Status::ok();
    shard_columns_.described_by = &collations_[leg];
    return describe(body);
  }
  if (type == 'C') ++phase;  // DECLARE CURSOR, then FETCH 0
  return Status::ok();
}

bool MergedCursor::declared() const {
  return described_ && std::all_of(phase_.begin(), phase_.end(), [](int phase) { return phase == 3; });
}

// The shards' RowDescription: the merger learns the column types; the client's is the shards'
// without the hidden sort columns.
Status MergedCursor::describe(std::string_view body) {
  auto described = read_shard_row_description(body, &shard_columns_);
  if (!described) return described.status();
  if (Status s = merger_.describe(described->types, described->names); !s) return s;
  shard_columns_.names = described->names;
  for (size_t i = 0; i < collations_.size(); ++i) {
    if (Status s =
            merge::check_text_collations(merger_.compared_text(), plan_, shard_columns_, collations_[i]);
        !s)
      return s;
  }
  if (rebuilt_columns(plan_)) {  // avg, variances, ...: columns the merger computes
    row_description_ = rebuilt_row_description(described->fields, plan_, merger_.output_types());
  } else {
    auto client = without_hidden_columns(described->fields, plan_);
    if (!client) return client.status();
    row_description_ = std::move(client.value());
  }
  described_ = true;
  return Status::ok();
}

std::string MergedCursor::refill_sql(int64_t rows) const {
  return "FETCH " + std::to_string(rows) + " FROM " + quoted_name(name_);
}

int64_t MergedCursor::refill_size(int64_t wanted) const {
  // An aggregate needs every row before its first group: the configured batch per refill.
  if (wanted == CursorStatement::kAll || plan_.kind == merge::MergeKind::Aggregate) return max_rows_buffered_;
  return std::clamp<int64_t>(wanted, 1, max_rows_buffered_);
}

Status MergedCursor::take_refill(size_t leg, char type, std::string_view body, int64_t rows) {
  switch (type) {
    case 'D': {
      auto row = merge::decode_data_row(body);
      if (!row) return Status::server("08P01", "a shard sent a malformed DataRow");
      return merger_.push(leg, std::move(*row));
    }
    case 'C': {
      const int64_t got = fetched_rows(body);
      if (got < 0) return Status::server("08P01", "a shard answered a cursor's FETCH without its row count");
      return got < rows ? merger_.finish_leg(leg) : Status::ok();
    }
    default: return Status::ok();  // its RowDescription: known since the DECLARE
  }
}

void end_cursors(MergedCursors& cursors, CursorsEnd end, std::string_view running) {
  for (auto it = cursors.begin(); it != cursors.end();) {
    MergedCursor& cursor = *it->second;
    const bool kept = end == CursorsEnd::Commit ? cursor.hold() : cursor.committed;
    if (!kept) {
      it = cursors.erase(it);
      continue;
    }
    if (end == CursorsEnd::Commit) cursor.committed = true;
    if (end == CursorsEnd::Failure && cursor.name() == running) cursor.failed = true;
    ++it;
  }
}

}  // namespace sw::session
