// A read whose key lists span shards (`key IN (1, 2, 3)`, `key = ANY(ARRAY[...])`,
// `key = ANY('{...}')` with keys in buckets of several shards): it runs on the shards of its keys
// only, each with every such list cut to the keys it owns (an IN item of another shard becomes
// NULL, which matches nothing where the list restricts rows; an array keeps its own elements).
// A shard thus reads only rows of its own buckets for the listed keys, even when it holds a
// copy of another shard's buckets during a move. The shards' rows are combined with the
// statement's scatter plan (concat, merge_sort, aggregate). It is a scatter over fewer shards,
// so it needs what a keyless scatter needs: one co-location group, no merge outside the
// statement's own block, every result row from a sharded row. Parameters in a list (extended
// protocol) are cut in each shard's Bind instead (ShardStatement::params: NULL for another
// shard's item, an array of the shard's elements in the client's format, text or binary); one
// used more than once in the statement cannot be, and the read goes to every shard with the
// whole list.
#include <algorithm>

#include "router/binary_array.h"
#include "router/dml_router.h"

namespace sw::router::detail {
namespace {

// The array's text ({"a","b"}), each element quoted for array_in.
std::string array_text(const std::vector<const parser::Value*>& elements) {
  std::string out = "{";
  for (size_t i = 0; i < elements.size(); ++i) {
    if (i > 0) out += ',';
    out += '"';
    for (char c : elements[i]->text) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

// The same as a '...' SQL string.
std::string array_literal(const std::vector<const parser::Value*>& elements) {
  std::string out = "'";
  for (char c : array_text(elements)) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// Splits a one-dimensional array literal's text into elements (PostgreSQL's array_in rules:
// whitespace around unquoted elements ignored, "..." with backslash escapes, unquoted NULL).
bool split_array(std::string_view text, std::vector<parser::Value>& out) {
  auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  };
  size_t at = 0;
  while (at < text.size() && space(text[at])) ++at;
  if (at >= text.size() || text[at] != '{') return false;
  ++at;
  while (at < text.size() && space(text[at])) ++at;
  if (at < text.size() && text[at] == '}')
    return text.find_first_not_of(" \t\n\r\v\f", at + 1) == std::string_view::npos;
  for (;;) {
    while (at < text.size() && space(text[at])) ++at;
    if (at >= text.size()) return false;
    parser::Value element;
    element.kind = parser::ValueKind::String;
    if (text[at] == '"') {
      for (++at; at < text.size() && text[at] != '"'; ++at) {
        if (text[at] == '\\' && at + 1 < text.size()) ++at;
        element.text += text[at];
      }
      if (at >= text.size()) return false;
      ++at;
    } else {
      const size_t begin = at;
      while (at < text.size() && text[at] != ',' && text[at] != '}') {
        if (text[at] == '{' || text[at] == '"' || text[at] == '\\') return false;
        ++at;
      }
      size_t end = at;
      while (end > begin && space(text[end - 1])) --end;
      element.text = std::string(text.substr(begin, end - begin));
      if (element.text.empty()) return false;
      if (element.text.size() == 4 && (element.text[0] == 'N' || element.text[0] == 'n') &&
          (element.text[1] == 'U' || element.text[1] == 'u') &&
          (element.text[2] == 'L' || element.text[2] == 'l') &&
          (element.text[3] == 'L' || element.text[3] == 'l')) {
        element.kind = parser::ValueKind::Null;
      }
    }
    out.push_back(std::move(element));
    while (at < text.size() && space(text[at])) ++at;
    if (at >= text.size()) return false;
    if (text[at] == '}') return text.find_first_not_of(" \t\n\r\v\f", at + 1) == std::string_view::npos;
    if (text[at] != ',') return false;
    ++at;
  }
}

// A binary-format array parameter's elements, each a string (or NULL) as a '{...}' literal's.
KeyOutcome binary_elements(std::string_view bytes, std::vector<parser::Value>& out) {
  const std::optional<BinaryArray> array = decode_binary_array(bytes);
  if (!array) return KeyOutcome::NotAKey;
  out.clear();
  for (const std::optional<std::string>& element : array->elements) {
    parser::Value value;
    value.kind = element ? parser::ValueKind::String : parser::ValueKind::Null;
    if (element) value.text = *element;
    out.push_back(std::move(value));
  }
  return KeyOutcome::Bucket;
}

// The shard's own elements of an array parameter, in the client's format: a text array, or
// array_send with the client's element type; nullopt when they cannot be encoded so.
std::optional<std::string> own_array(const BindParam& param, const std::vector<const parser::Value*>& own) {
  if (!param.binary) return array_text(own);
  const std::optional<BinaryArray> array = decode_binary_array(param.bytes);
  if (!array) return std::nullopt;
  std::vector<std::optional<std::string>> elements;
  for (const parser::Value* value : own) {
    if (value->kind == parser::ValueKind::Null) {
      elements.emplace_back(std::nullopt);
    } else {
      elements.emplace_back(value->text);
    }
  }
  return encode_binary_array(*array, elements);
}

}  // namespace

KeyOutcome array_elements(const parser::Value& array, const BindValues* params,
                          std::vector<parser::Value>& out) {
  std::string_view text;
  if (array.kind == parser::ValueKind::String) {
    text = array.text;
  } else if (array.kind == parser::ValueKind::Param) {
    if (params == nullptr) return KeyOutcome::NeedsBind;
    const auto index = static_cast<size_t>(array.param - 1);
    if (array.param < 1 || index >= params->params.size()) return KeyOutcome::NotAKey;
    const BindParam& param = params->params[index];
    if (param.null) return KeyOutcome::NotAKey;
    if (param.binary) return binary_elements(param.bytes, out);
    text = param.bytes;
  } else {
    return KeyOutcome::NotAKey;
  }
  out.clear();
  return split_array(text, out) ? KeyOutcome::Bucket : KeyOutcome::NotAKey;
}

// Whether $n appears once in the statement text (a parameter cut for a shard must not be used
// elsewhere; a "$n" inside a string or comment only makes this say no, which is safe).
bool used_once(const std::string& text, int param) {
  std::string token(1, '$');
  token += std::to_string(param);
  int count = 0;
  for (size_t at = text.find(token); at != std::string::npos; at = text.find(token, at + 1)) {
    const size_t end = at + token.size();
    if (end < text.size() && text[end] >= '0' && text[end] <= '9') continue;
    ++count;
  }
  return count == 1;
}

// Fills split_ with every shard's edits; false when a list item to remove is a parameter that
// cannot be replaced (used more than once).
bool DmlRouter::split_edits(const std::vector<int>& shards) {
  std::vector<int> done;  // predicates already cut (one predicate may key several references)
  for (int shard : shards) split_.push_back(ShardEdits{shard, {}});
  for (int t : sharded_) {
    for (const Constraint& constraint : keys(t).own) {
      if (constraint.kind != ConstraintKind::InList || constraint.predicate < 0 ||
          shards_of(constraint.buckets).size() <= 1 ||
          std::find(done.begin(), done.end(), constraint.predicate) != done.end()) {
        continue;
      }
      done.push_back(constraint.predicate);
      const parser::KeyPredicate& predicate = facts_.predicates[static_cast<size_t>(constraint.predicate)];
      auto owned_by = [&](size_t item, int shard) {
        const int64_t bucket = constraint.item_buckets[item];
        return bucket >= 0 && dir_.bucket(static_cast<uint32_t>(bucket)).shard == shard;
      };
      for (ShardEdits& edits : split_) {
        if (predicate.array) {
          const parser::Value& array = predicate.values.front();
          std::vector<const parser::Value*> own;
          for (size_t i = 0; i < constraint.elements.size(); ++i) {
            if (owned_by(i, edits.shard)) own.push_back(&constraint.elements[i]);
          }
          if (array.kind == parser::ValueKind::String) {
            edits.literals.push_back({array.location, array_literal(own)});
          } else if (array.kind == parser::ValueKind::Param && used_once(facts_.text, array.param)) {
            auto value = own_array(params_->params[static_cast<size_t>(array.param - 1)], own);
            if (!value) return false;
            edits.params.push_back({array.param, std::move(value)});
          } else {
            return false;
          }
          continue;
        }
        for (size_t i = 0; i < predicate.values.size(); ++i) {
          const int64_t bucket = constraint.item_buckets[i];
          if (bucket < 0 || owned_by(i, edits.shard)) continue;
          const parser::Value& value = predicate.values[i];
          if (value.kind != parser::ValueKind::Param) {
            edits.literals.push_back({value.location, "NULL"});
          } else if (used_once(facts_.text, value.param)) {
            edits.params.push_back({value.param, std::nullopt});
          } else {
            return false;
          }
        }
      }
    }
  }
  return true;
}

Route DmlRouter::split_read(int table) {
  splitting_ = true;
  if (facts_.kind == parser::StatementKind::Insert) return split_insert(table);
  if (facts_.kind == parser::StatementKind::Update || facts_.kind == parser::StatementKind::Delete)
    return split_write(table);
  const bool plain_select = facts_.node_type == "SelectStmt" && facts_.select.plain;
  if (facts_.writes || facts_.query_kind != parser::StatementKind::Select || !plain_select)
    return several_shards_error(table);
  for (int t : sharded_) {
    if (find(t) != find(table)) return several_shards_error(table);
  }
  const std::vector<int> shards = key_shards();
  if (!split_edits(shards)) {
    split_.clear();
    return keyless_read(table);
  }
  const TableRule& r = *rule(table);
  if (!unsharded_.empty()) {
    return make_error("0A000",
                      "SELECT reads sharded table " + r.config_name + " with keys on several shards (" +
                          shard_names(dir_, shards) + ") together with unsharded table " +
                          table_name(ref(unsharded_.front())) + ", which lives on the default shard only",
                      r.config_name);
  }
  std::string why;
  if (!scatter_allowed(why)) return make_error("0A000", why, r.config_name);
  Route route;
  route.kind = RouteKind::Scatter;
  route.table = r.config_name;
  route.reason = "the keys of " + r.config_name + " are on shards " + shard_names(dir_, shards) +
                 ": each runs with its own keys, rows concatenated";
  if (facts_.scopes[0].features != 0) return merged_scatter(std::move(route), table);
  auto plan = std::make_shared<merge::MergePlan>();
  if (Status filled = fill_statements(*plan, {}); !filled) {
    return make_error("0A000", "SELECT on sharded table " + r.config_name + " " + filled.message,
                      r.config_name);
  }
  route.merge = std::move(plan);
  return route;
}

// An UPDATE or DELETE whose key lists fall on several shards (docs/architecture.md §6.3, "Writes
// with key lists on several shards"): each of those shards runs it with the lists cut to its own
// keys; the session runs the parts in one transaction per shard and commits them together. Only
// when every sharded table is co-located with the target and keyed by lists the split can cut,
// nothing unsharded is read (it lives on the default shard only), and no part sets the key to
// another shard's value.
Route DmlRouter::split_write(int table) {
  if (!facts_.complete || !unsharded_.empty()) return several_shards_error(table);
  for (int t : sharded_) {
    if (find(t) != find(table)) return several_shards_error(table);
  }
  const std::vector<int> shards = key_shards();
  if (!split_edits(shards)) {
    split_.clear();
    return several_shards_error(table);
  }
  Route route;
  for (const ShardEdits& edits : split_) {
    if (!check_assignments(edits.shard, route)) return route;
    auto sql = parser::replace_literals(facts_, edits.literals);
    if (!sql) return make_error("0A000", sql.status().message, rule(table)->config_name);
    route.shards.push_back(edits.shard);
    route.shard_statements.push_back({edits.shard, std::move(sql.value()), edits.params});
  }
  for (int t : sharded_) {
    for (uint32_t bucket : keys(t).buckets) {
      route.buckets.push_back(bucket);
      if (dir_.bucket(bucket).state == BucketState::Migrating) route.migrating = true;
    }
  }
  std::sort(route.buckets.begin(), route.buckets.end());
  route.buckets.erase(std::unique(route.buckets.begin(), route.buckets.end()), route.buckets.end());
  route.kind = RouteKind::Scatter;
  route.writes = true;
  route.split_write = true;
  route.table = rule(table)->config_name;
  if (explain_ == Explain::Yes) {
    route.reason = "the keys of " + route.table + " are on shards " + shard_names(dir_, shards) +
                   ": each runs the " + statement_verb(facts_) +
                   " with its own keys, committed together (two-phase commit)";
  }
  return route;
}

// The shards of the sharded references' keys, ascending.
std::vector<int> DmlRouter::key_shards() const {
  std::vector<int> shards;
  for (int t : sharded_) {
    for (int shard : shards_of(keys_[static_cast<size_t>(t)].buckets)) {
      if (std::find(shards.begin(), shards.end(), shard) == shards.end()) shards.push_back(shard);
    }
  }
  std::sort(shards.begin(), shards.end());
  return shards;
}

// The SQL the shards run: one statement for all, or each split shard's own.
Status DmlRouter::fill_statements(merge::MergePlan& plan, parser::SelectRewrite rewrite) const {
  if (split_.empty()) {
    rewrite.tables = owned_rows_splices(facts_, rules_, dir_.bucket_count());
    auto sql = parser::rewrite_select(facts_, rewrite);
    if (!sql) return sql.status();
    plan.shard_sql = std::move(sql.value());
    return Status::ok();
  }
  for (const ShardEdits& edits : split_) {
    rewrite.literals = edits.literals;
    auto sql = parser::rewrite_select(facts_, rewrite);
    if (!sql) return sql.status();
    plan.shard_statements.push_back({edits.shard, std::move(sql.value()), edits.params});
  }
  return Status::ok();
}

// A part of a row-by-row split (InsertSplit::row_by_row): one INSERT per row, and as its Query
// text those INSERTs in order (each ends on a new line, so a trailing `--` comment ends there).
bool DmlRouter::cut_row_by_row(InsertSplit::Part& part, const std::string& table, Route& error) const {
  part.sql.clear();
  for (size_t row : part.rows) {
    auto cut = parser::insert_with_rows(facts_, {row});
    if (!cut) {
      error = make_error(cut.status().sqlstate,
                         "INSERT into sharded table " + table + ": " + cut.status().message, table);
      return false;
    }
    if (!part.sql.empty()) part.sql += "\n;\n";
    part.sql += cut.value().sql;
    part.row_statements.push_back(std::move(cut.value()));
  }
  return true;
}

// An INSERT whose VALUES rows fall on several shards (docs/architecture.md §6.3, "Split INSERT"):
// one INSERT per shard with only that shard's rows, every other part of the text verbatim
// (ON CONFLICT, RETURNING). The parts must run in one transaction; a caller that cannot run them
// so answers Route::error (the refusal of a write on several shards). Only a plain INSERT ... VALUES
// into one sharded table is cut: another table in the statement (a subquery in a row, a CTE)
// could not be split along with it, and an ON CONFLICT DO UPDATE that sets the key to a value
// must stay on one shard, which the rows do not.
Route DmlRouter::split_insert(int table) {
  if (facts_.inserts.size() != 1 || facts_.inserts.front().table != table || sharded_.size() != 1 ||
      !unsharded_.empty() || !facts_.complete || !facts_.equalities.empty()) {
    return several_shards_error(table);
  }
  const parser::InsertFacts& insert = facts_.inserts.front();
  const TableRule& r = *rule(table);
  const auto column = std::find(insert.columns.begin(), insert.columns.end(), r.key);
  if (column == insert.columns.end()) return several_shards_error(table);
  const auto position = static_cast<size_t>(column - insert.columns.begin());

  auto split = std::make_shared<InsertSplit>();
  split->row_by_row = insert.on_conflict == parser::OnConflict::DoNothing && facts_.returning;
  std::vector<int> row_shard;
  Route route;
  for (const std::vector<parser::Value>& row : insert.rows) {
    const KeyBucket key =
        position < row.size() ? key_bucket(row[position], r, params_, dir_.bucket_count()) : KeyBucket{};
    if (key.outcome != KeyOutcome::Bucket) return several_shards_error(table);
    row_shard.push_back(dir_.bucket(key.bucket).shard);
    route.buckets.push_back(key.bucket);
    if (dir_.bucket(key.bucket).state == BucketState::Migrating) route.migrating = true;
  }
  std::vector<int> shards = row_shard;
  std::sort(shards.begin(), shards.end());
  shards.erase(std::unique(shards.begin(), shards.end()), shards.end());
  split->row_part.resize(row_shard.size());
  for (size_t part = 0; part < shards.size(); ++part) {
    Route error;
    if (!check_assignments(shards[part], error)) return error;
    std::vector<size_t> rows;
    for (size_t i = 0; i < row_shard.size(); ++i) {
      if (row_shard[i] != shards[part]) continue;
      rows.push_back(i);
      split->row_part[i] = static_cast<int>(part);
    }
    auto cut = parser::insert_with_rows(facts_, rows);
    if (!cut)
      return make_error(cut.status().sqlstate,
                        "INSERT into sharded table " + r.config_name + ": " + cut.status().message,
                        r.config_name);
    split->parts.push_back(
        {shards[part], std::move(cut.value().sql), std::move(cut.value().params), rows, {}});
    if (split->row_by_row && !cut_row_by_row(split->parts.back(), r.config_name, error)) return error;
  }
  std::sort(route.buckets.begin(), route.buckets.end());
  route.buckets.erase(std::unique(route.buckets.begin(), route.buckets.end()), route.buckets.end());
  route.kind = RouteKind::Split;
  route.table = r.config_name;
  route.reason = "the rows' keys of " + r.config_name + " fall on shards " + shard_names(dir_, shards) +
                 ": one INSERT per shard with its own rows, in one transaction";
  route.error = several_shards_error(table).error;
  route.split = std::move(split);
  return route;
}

}  // namespace sw::router::detail
