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

}  // namespace sw::router::detail
