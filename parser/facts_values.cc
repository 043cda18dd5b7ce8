// FactsBuilder: values, column references, tables and scopes.
//
// Literal values: strings are libpg_query's decoded text; numbers are the token as written in
// the SQL (libpg_query's JSON drops negative and zero integers, so integers are read from the
// text at the constant's location; "-" + digits when PostgreSQL folded a unary minus into the
// constant, whose location is then the minus sign).
#include <algorithm>

#include "parser/facts_builder.h"
#include "parser/sql_lexer.h"

namespace sw::parser::detail {
namespace {

std::string type_name(JsonRef type_name) {
  std::string name;
  for (JsonRef part : type_name["names"]) name = part.body()["sval"].string();
  if (type_name["arrayBounds"]) name += "[]";
  return name;
}

}  // namespace

Value FactsBuilder::value(JsonRef node) const {
  const std::string_view type = node.node_type();
  JsonRef body = node.body();
  Value out;
  if (type == "A_Const") {
    out.location = static_cast<int>(body["location"].integer(-1));
    if (body["isnull"].boolean()) {
      out.kind = ValueKind::Null;
    } else if (JsonRef ival = body["ival"]) {
      out.kind = ValueKind::Number;
      if (out.location < 0 || !number_at(sql_, static_cast<size_t>(out.location), out.text)) {
        const int64_t v = ival["ival"].integer(0);
        if (v <= 0) {  // zero or negative: not recoverable from the JSON
          out.kind = ValueKind::Other;
        } else {
          out.text = std::to_string(v);
        }
      }
    } else if (JsonRef fval = body["fval"]) {
      out.kind = ValueKind::Number;
      out.text = fval["fval"].string();
    } else if (JsonRef sval = body["sval"]) {
      out.kind = ValueKind::String;
      out.text = sval["sval"].string();
    } else if (JsonRef boolval = body["boolval"]) {
      out.kind = ValueKind::Bool;
      out.text = boolval["boolval"].boolean() ? "true" : "false";
    }                               // bit strings: Other
  } else if (type == "ParamRef") {  // (max_param is counted by expression(), which sees all)
    out.kind = ValueKind::Param;
    out.param = static_cast<int>(body["number"].integer(0));
    out.location = static_cast<int>(body["location"].integer(-1));
  } else if (type == "TypeCast") {
    out = value(body["arg"]);
    out.cast = type_name(body["typeName"]);
  } else if (type == "ColumnRef") {
    for (JsonRef field : body["fields"]) {
      if (field.node_type() != "String") return Value{};  // A_Star
      if (!out.text.empty()) out.text += '.';
      out.text += field.body()["sval"].string();
    }
    out.kind = ValueKind::Column;
  }
  return out;
}

bool FactsBuilder::column(JsonRef node, int scope, ColumnRef& out) const {
  if (node.node_type() != "ColumnRef") return false;
  std::vector<std::string> parts;
  for (JsonRef field : node.body()["fields"]) {
    if (field.node_type() != "String") return false;  // t.* or *
    parts.push_back(field.body()["sval"].string());
  }
  if (parts.empty()) return false;
  out = ColumnRef{};
  out.name = std::move(parts.back());
  parts.pop_back();
  out.scope = scope;
  if (!parts.empty()) {
    out.qualified = true;
    out.table = resolve(parts, scope);
  }
  return true;
}

// The table a qualifier ([[db.]schema.]name) designates: the innermost block that has the
// name, as PostgreSQL resolves it; -1 when that is not a table or nothing has the name.
int FactsBuilder::resolve(const std::vector<std::string>& qualifier, int scope) const {
  const std::string& name = qualifier.back();
  const std::string schema = qualifier.size() >= 2 ? qualifier[qualifier.size() - 2] : "";
  for (int s = scope; s >= 0; s = out_.scopes[static_cast<size_t>(s)].parent) {
    const auto& entries = entries_[static_cast<size_t>(s)];
    for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
      if (it->name == name && (schema.empty() || it->schema.empty() || it->schema == schema)) {
        return it->table;
      }
    }
  }
  return -1;
}

int FactsBuilder::add_table(JsonRef range_var, TableRole role, int scope, bool nullable, bool visible) {
  if (!range_var["relname"] && range_var.node_type() == "RangeVar") range_var = range_var.body();
  if (!range_var["relname"]) return -1;
  TableRef table;
  table.schema = range_var["schemaname"].string();
  table.name = range_var["relname"].string();
  table.alias = range_var["alias"]["aliasname"].string();
  table.role = role;
  table.scope = scope < 0 ? 0 : scope;
  table.nullable = nullable;
  table.at.location = static_cast<int>(range_var["location"].integer(-1));
  const int index = static_cast<int>(out_.tables.size());
  if (visible && scope >= 0) {
    if (table.alias.empty()) {
      add_entry(scope, {table.name, table.schema, index});
    } else {
      add_entry(scope, {table.alias, "", index});
    }
  }
  out_.tables.push_back(std::move(table));
  return index;
}

bool FactsBuilder::is_cte(const std::string& name, int scope) const {
  for (int s = scope; s >= 0; s = out_.scopes[static_cast<size_t>(s)].parent) {
    for (const auto& cte : ctes_[static_cast<size_t>(s)])
      if (cte.first == name) return true;
  }
  return false;
}

int FactsBuilder::cte_scope(const std::string& name, int scope) const {
  for (int s = scope; s >= 0; s = out_.scopes[static_cast<size_t>(s)].parent) {
    const auto& ctes = ctes_[static_cast<size_t>(s)];
    for (auto it = ctes.rbegin(); it != ctes.rend(); ++it)
      if (it->first == name) return it->second;
  }
  return -1;
}

// A CTE read a second time feeds no block: its rows would meet themselves (a self-join).
void FactsBuilder::feed(int inner, int scope, bool nullable, bool once) {
  Scope& block = out_.scopes[static_cast<size_t>(inner)];
  const int reads = once ? 1 : ++cte_reads_[static_cast<size_t>(inner)];
  block.feeds = reads == 1 ? scope : -1;
  block.feeds_nullable = reads == 1 && nullable;
}

int FactsBuilder::new_scope(int parent) {
  Scope scope;
  scope.parent = parent;
  out_.scopes.push_back(scope);
  entries_.emplace_back();
  ctes_.emplace_back();
  cte_reads_.push_back(0);
  return static_cast<int>(out_.scopes.size() - 1);
}

void FactsBuilder::add_entry(int scope, Entry entry) {
  entries_[static_cast<size_t>(scope)].push_back(std::move(entry));
}

// On too deep a tree, the conservative facts: every relation named anywhere.
void FactsBuilder::finish(JsonRef body) {
  if (!too_deep_) return;
  out_.complete = false;
  out_.tables.clear();
  out_.scopes.assign(1, Scope{});
  out_.predicates.clear();
  out_.equalities.clear();
  out_.assignments.clear();
  out_.inserts.clear();
  for_each_object(body, [&](JsonRef object) {
    if (object["relname"]) add_table(object, TableRole::Read, 0, false, false);
  });
}

}  // namespace sw::parser::detail
