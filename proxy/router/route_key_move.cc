// An UPDATE that sets the key of a sharded table to a value another shard may own
// (docs/architecture.md §6.3, "Updates that move rows"). Every shard deletes the matching rows of
// its own buckets and evaluates the SET list on them in the same statement:
//   WITH <client's WITH list,> shardwire_old AS (DELETE FROM <target> [USING <client's FROM>]
//     WHERE (<where>) AND <owned> RETURNING <t> AS shardwire_old_row,
//     jsonb_build_object('<column>', (<expr>), ...) AS shardwire_new_values)
//   SELECT shardwire.bucket_of(<t>.key), <t>.*, NULL AS shardwire_move_end, <client's RETURNING>
//   FROM (SELECT (jsonb_populate_record(shardwire_old_row, shardwire_new_values)).*
//         FROM shardwire_old) AS <t>
// so each SET expression sees the old row (and the one FROM row the DELETE joined it with, as the
// UPDATE's would), the other columns keep their values exactly, and the client's RETURNING items
// see the new row. The session inserts each new row on the owner of its bucket, in the same
// transactions, and all shards commit together.
#include <algorithm>
#include <cctype>

#include "router/dml_router.h"

namespace sw::router::detail {
namespace {

std::string quoted(const std::string& name) {
  std::string out = "\"";
  for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + '"';
}

std::string string_literal(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + '\'';
}

// The number n of a SET value that is a bare parameter `$n`; 0 otherwise.
size_t bare_parameter(std::string_view value) {
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.front()))) value.remove_prefix(1);
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) value.remove_suffix(1);
  if (value.size() < 2 || value.front() != '$' || value.size() > 6) return 0;
  size_t n = 0;
  for (char c : value.substr(1)) {
    if (c < '0' || c > '9') return 0;
    n = n * 10 + static_cast<size_t>(c - '0');
  }
  return n;
}

}  // namespace

// One SET value as jsonb_build_object's argument. A bare parameter of no declared type would have
// no type there (jsonb_build_object takes "any"); PostgreSQL's UPDATE gives it the column's type,
// and so does a CASE whose other branch is the old row's column (the extended protocol, §4.1).
std::string DmlRouter::key_move_value(const std::string& t, const std::string& column,
                                      const std::string& value) const {
  const size_t n = bare_parameter(value);
  const bool typed = params_ != nullptr && n != 0 && n <= params_->types.size() && params_->types[n - 1] != 0;
  if (n == 0 || typed) return "(" + value + "\n)";
  return "CASE WHEN false THEN " + t + "." + quoted(column) + " ELSE $" + std::to_string(n) + " END";
}

// The new values of the SET columns as one jsonb object, evaluated on the old row: the
// expressions' object, then each sub-select's (`SET (a, b) = (SELECT ...)`: its one row's fields,
// NULLs when it has none, as the UPDATE's).
std::string DmlRouter::key_move_values(const std::string& t,
                                       const std::vector<const parser::Assignment*>& columns,
                                       const parser::UpdateParts& p) const {
  std::string sql = "jsonb_build_object(";
  bool first = true;
  for (size_t i = 0; i < columns.size(); ++i) {
    if (p.values[i].query >= 0) continue;
    sql += (first ? "" : ", ") + string_literal(columns[i]->column) + ", " +
           key_move_value(t, columns[i]->column, p.values[i].expression);
    first = false;
  }
  sql += ")";
  for (size_t q = 0; q < p.queries.size(); ++q) {
    std::string fields, nulls, names;
    for (size_t i = 0; i < columns.size(); ++i) {
      if (p.values[i].query != static_cast<int>(q)) continue;
      const std::string field = "shardwire_f" + std::to_string(p.values[i].field);
      const std::string column = (names.empty() ? "" : ", ") + string_literal(columns[i]->column);
      fields.append(column).append(", shardwire_sub.").append(field);
      nulls.append(column).append(", NULL");
      names.append(names.empty() ? "" : ", ").append(field);
    }
    sql.append(" || COALESCE((SELECT jsonb_build_object(").append(fields).append(") FROM (");
    sql.append(p.queries[q]).append("\n) AS shardwire_sub(").append(names);
    sql.append(")), jsonb_build_object(").append(nulls).append("))");
  }
  return sql;
}

Route DmlRouter::key_move(int target, const std::vector<int>& only) {
  Route error;
  if (!every_shard_allowed(target, error)) return error;
  const TableRule& r = *rule(target);
  const parser::TableRef& written = ref(target);
  auto refuse = [&](const std::string& why) {
    return make_error("0A000",
                      "UPDATE of sharded table " + r.config_name + " sets its key " + r.key +
                          ", which moves rows between shards; " + why +
                          " (instead, DELETE the rows RETURNING them and INSERT them with the new key in one "
                          "transaction)",
                      r.config_name);
  };
  auto parts = parser::update_parts(facts_);
  if (!parts) return refuse(parts.status().message);
  std::vector<const parser::Assignment*> assignments;
  for (const parser::Assignment& assignment : facts_.assignments) {
    if (assignment.table == target) assignments.push_back(&assignment);
  }
  if (assignments.size() != parts.value().values.size())
    return refuse("its SET list does not give one value per column");
  const parser::UpdateParts& p = parts.value();
  if (!p.from.empty() && !p.returning.empty())
    return refuse("its RETURNING list could read the FROM tables, which the new rows no longer join");
  const std::string t = quoted_reference(target);
  const std::string owned =
      rules_.owned_rows_only() ? owned_row_condition(r, t, dir_.bucket_count()) : "true";
  std::string sql =
      "WITH " + (p.with.empty() ? "" : p.with + ", ") + "shardwire_old AS (DELETE FROM" + p.target;
  if (!p.from.empty()) sql += "USING" + p.from + "\n";
  sql += "WHERE ";
  sql += p.where.empty() ? owned : "(" + p.where + "\n) AND " + owned;
  sql += " RETURNING " + t + " AS shardwire_old_row, " + key_move_values(t, assignments, p) +
         " AS shardwire_new_values)\nSELECT shardwire.bucket_of(" + t + "." + quoted(r.key) +
         "::" + key_type_name(r.key_type) + ", " + std::to_string(dir_.bucket_count()) + "), " + t +
         ".*, NULL AS " + kKeyMoveEnd;
  if (!p.returning.empty()) sql += ", " + p.returning + "\n";
  sql +=
      " FROM (SELECT (jsonb_populate_record(shardwire_old_row, shardwire_new_values)).* FROM shardwire_old) "
      "AS " +
      t;
  Route route = every_shard_route(target, sql);
  if (!only.empty()) {  // the other shards hold none of the rows and own none of their new keys
    Route some = route;
    some.shards.clear();
    some.shard_statements.clear();
    for (size_t i = 0; i < route.shards.size(); ++i) {
      if (std::find(only.begin(), only.end(), route.shards[i]) == only.end()) continue;
      some.shards.push_back(route.shards[i]);
      some.shard_statements.push_back(route.shard_statements[i]);
    }
    route = std::move(some);
  }
  auto move = std::make_shared<KeyMove>();
  move->table_sql = (written.schema.empty() ? "" : quoted(written.schema) + ".") + quoted(written.name);
  move->client_returning = facts_.returning;
  move->client_sql = facts_.text;
  move->owner.reserve(dir_.bucket_count());
  for (uint32_t b = 0; b < dir_.bucket_count(); ++b) move->owner.push_back(dir_.bucket(b).shard);
  route.key_move = std::move(move);
  route.reason = "UPDATE sets the key of " + r.config_name + ": " +
                 (only.empty() ? "every shard" : "the rows' shard and the new key's owner each") +
                 " deletes the rows of its own buckets and computes the new rows, which are "
                 "inserted on the owners of their new keys, committed together (two-phase commit)";
  return route;
}

}  // namespace sw::router::detail
