// KeyMovePlan: the rows an UPDATE of the key moves between shards (docs/architecture.md §6.3,
// "Updates that move rows").
#include "session/key_move.h"

#include <charconv>
#include <utility>

#include "merge/binary.h"
#include "wire/messages.h"

namespace sw::session {
namespace {
// The moved rows are held until every shard answered: a move this large is refused (54000),
// rolled back, rather than held without bound.
constexpr size_t kMaxHeldRows = 64u << 20;
// An Execute's row limit is an int32 to PostgreSQL: 0 or a negative one runs every row.
constexpr uint32_t kMaxExecuteRows = 0x7fffffff;

std::string quoted_identifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + '"';
}

// An escape-string literal (E'...'), read the same whatever standard_conforming_strings is.
void append_literal(std::string& out, const std::optional<std::string>& value) {
  if (!value) {
    out += "NULL";
    return;
  }
  out += "E'";
  for (char c : *value) {
    if (c == '\'' || c == '\\') out += c;
    out += c;
  }
  out += '\'';
}

Status bad(const std::string& why) {
  return Status::server("08P01", "a shard answered an UPDATE that moves rows with " + why);
}

}  // namespace

KeyMovePlan::KeyMovePlan(std::shared_ptr<const router::KeyMove> move, std::vector<int> leg_shards,
                         KeyMoveClient client)
    : move_(std::move(move)), leg_shards_(std::move(leg_shards)), client_(std::move(client)) {}

uint16_t KeyMovePlan::format_of(size_t item) const {
  const std::vector<uint16_t>& formats = client_.result_formats;
  if (formats.empty()) return 0;
  return formats.size() == 1 ? formats.front() : formats[item];
}

// The client's RowDescription of its RETURNING items, as its shard described the client's own
// UPDATE (extended: in its result formats, each binary one checked to have a conversion); owed
// when the client described its portal (always in the simple protocol), after its BindComplete:
// with the move's RowDescription.
Status KeyMovePlan::client_row_description(std::vector<wire::RowField> items) {
  const std::vector<uint16_t>& formats = client_.result_formats;
  if (formats.size() > 1 && formats.size() != items.size()) {
    return Status::client("08P01", "bind message has " + std::to_string(formats.size()) +
                                       " result formats but query has " + std::to_string(items.size()) +
                                       " columns");
  }
  item_types_.clear();
  for (size_t i = 0; i < items.size(); ++i) {
    item_types_.push_back(items[i].type_oid);
    items[i].format = static_cast<int16_t>(format_of(i));
    if (items[i].format == 1 && !merge::has_binary_form(items[i].type_oid)) {
      return Status::client("0A000", "RETURNING item " + std::string(items[i].name) + " (type OID " +
                                         std::to_string(items[i].type_oid) +
                                         ") of an UPDATE that moves rows between shards has no binary form "
                                         "in shardwire; ask for it in text");
    }
  }
  described_.clear();
  if (!client_.extended || client_.describes) wire::encode_row_description(described_, items);
  return Status::ok();
}

void KeyMovePlan::on_no_data() {
  if (client_.describes) described_.assign("n\0\0\0\4", 5);
}

size_t KeyMovePlan::leg_of_shard(int shard) const {
  for (size_t i = 0; i < leg_shards_.size(); ++i) {
    if (leg_shards_[i] == shard) return i;
  }
  return leg_shards_.size();
}

Status KeyMovePlan::on_row_description(size_t leg, std::string_view shard, std::string_view body,
                                       std::string& client) {
  auto fields = wire::decode_row_description(body);
  if (!fields) return fields.status();
  size_t marker = 0;
  for (size_t i = 1; i < fields.value().size(); ++i) {
    if (fields.value()[i].name == router::kKeyMoveEnd) {
      marker = i;
      break;
    }
  }
  // Every shard's rows go under one description: the client's items, the moved rows' columns.
  ResultShape& shape = marker == 0 ? client_shape_ : move_shape_;
  if (Status same = shape.check(leg, shard, body); !same) return same;
  if (marker == 0) return client_row_description(std::move(fields.value()));  // the client's UPDATE
  if (marker_ == 0) {
    marker_ = marker;
    for (size_t i = 1; i < marker; ++i) columns_.push_back(quoted_identifier(fields.value()[i].name));
  }
  if (move_->client_returning && fields.value().size() != marker + 1 + item_types_.size())
    return bad("other RETURNING items than the UPDATE's own");
  client = described_;
  return Status::ok();
}

Status KeyMovePlan::on_data_row(size_t /*leg*/, std::string_view body, std::string& client) {
  auto values = wire::decode_data_row(body);
  if (!values) return values.status();
  const auto& row = values.value();
  if (marker_ == 0 || row.size() <= marker_ || !row[0]) return bad("a row without its bucket");
  uint32_t bucket = 0;
  const std::string_view text = *row[0];
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), bucket);
  if (error != std::errc() || end != text.data() + text.size() || bucket >= move_->owner.size())
    return bad("the bucket '" + std::string(text) + "'");
  if (move_->client_returning) {
    std::vector<std::optional<std::string>> mine;
    for (size_t i = marker_ + 1; i < row.size(); ++i) {
      const size_t item = i - marker_ - 1;
      if (!row[i] || item >= item_types_.size() || format_of(item) == 0) {
        mine.push_back(row[i] ? std::optional<std::string>(std::string(*row[i])) : std::nullopt);
        continue;
      }
      auto binary = merge::to_binary(item_types_[item], *row[i], client_.dates);
      if (!binary) return binary.status();
      mine.push_back(std::move(binary.value()));
    }
    wire::encode_data_row(client, mine);
    fetch(client);
  }
  const size_t to = leg_of_shard(move_->owner[bucket]);
  if (to == leg_shards_.size()) return bad("a row for a shard the write has no leg on");
  held_bytes_ += body.size();
  if (held_bytes_ > kMaxHeldRows) {
    return Status::client("54000", "an UPDATE that moves rows between shards moves over " +
                                       std::to_string(kMaxHeldRows >> 20) +
                                       " MiB of rows, which shardwire holds until every shard answered; "
                                       "update fewer rows at a time");
  }
  Row moved;
  moved.to = to;
  for (size_t i = 1; i < marker_; ++i)
    moved.values.push_back(row[i] ? std::optional<std::string>(std::string(*row[i])) : std::nullopt);
  rows_.push_back(std::move(moved));
  return Status::ok();
}

void KeyMovePlan::fetch(std::string& row) {
  const std::vector<uint32_t>& limits = client_.row_limits;
  if (limits.empty()) return;
  if (execute_ >= limits.size()) {
    rest_.push_back(std::move(row));
    row.clear();
    return;
  }
  ++execute_rows_;
  const uint32_t limit = limits[execute_];
  if (limit == 0 || limit > kMaxExecuteRows || execute_rows_ < limit) return;
  row.append("s\0\0\0\4", 5);  // PortalSuspended
  ++execute_;
  execute_rows_ = 0;
}

std::string KeyMovePlan::portal_end() const {
  std::string out;
  for (size_t i = execute_; i < client_.row_limits.size(); ++i)
    wire::encode_command_complete(out, "UPDATE " + std::to_string(i == execute_ ? execute_rows_ : 0));
  return out;
}

std::unique_ptr<KeyMoveRest> KeyMovePlan::take_rest() {
  if (!fetched_by_executes() || execute_ < client_.row_limits.size()) return nullptr;
  return std::make_unique<KeyMoveRest>(client_.portal, std::move(rest_));
}

std::string KeyMoveRest::execute(uint32_t max_rows) {
  std::string out;
  const bool limited = max_rows != 0 && max_rows <= kMaxExecuteRows;
  uint64_t taken = 0;
  for (; next_ < rows_.size() && (!limited || taken < max_rows); ++next_, ++taken) out += rows_[next_];
  if (limited && taken == max_rows) {
    out.append("s\0\0\0\4", 5);  // PortalSuspended
  } else {
    wire::encode_command_complete(out, "UPDATE " + std::to_string(taken));
  }
  return out;
}

std::string KeyMovePlan::next_statement(size_t leg) const {
  std::string sql;
  for (const Row& row : rows_) {
    if (row.to != leg) continue;
    if (sql.empty()) {
      sql = "INSERT INTO " + move_->table_sql + " (";
      for (size_t i = 0; i < columns_.size(); ++i) sql += (i ? ", " : "") + columns_[i];
      sql += ") OVERRIDING SYSTEM VALUE VALUES ";
    } else {
      sql += ", ";
    }
    sql += '(';
    for (size_t i = 0; i < row.values.size(); ++i) {
      if (i) sql += ", ";
      append_literal(sql, row.values[i]);
    }
    sql += ')';
  }
  return sql;
}

}  // namespace sw::session
