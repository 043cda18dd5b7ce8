// describe_facts() and names: a stable text form of the routing facts for tests and debugging.
//
//   kind=Select query=Select writes=no returning=no complete=yes max_param=1
//   scope 0 parent=-1 features=order_by,limit non_table_from=no
//   table 0 app.orders as o role=read scope=0 nullable
//   predicate t0.tenant_id = 5 usable
//   predicate tenant_id@1 in ('a', $1::uuid) unusable
//   equality t0.tenant_id = t1.tenant_id (left restricts right)
//   assignment t0.total = $2
//   insert t0 columns=(id, tenant_id) rows=2 on_conflict=update | row (1, 'x') | ...
//   insert t0 columns=(tenant_id, v) rows=0 from_select select@1 (t1.tenant_id, ?)
//
// A column is "t<table>.<name>" when qualified by a table, "?.<name>" when qualified by
// something else, "<name>@<scope>" when unqualified. Values: 'string', number, NULL, true,
// $n, col:<text>, ? (other); "::type" for a cast.
#include <string>

#include "parser/analyze.h"

namespace sw::parser {
namespace {

std::string quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    out.push_back(c);
    if (c == '\'') out.push_back('\'');
  }
  return out + "'";
}

std::string value_text(const Value& value) {
  std::string out;
  switch (value.kind) {
    case ValueKind::String: out = quote(value.text); break;
    case ValueKind::Number: out = value.text; break;
    case ValueKind::Null: out = "NULL"; break;
    case ValueKind::Bool: out = value.text; break;
    case ValueKind::Param:
      out = '$';
      out += std::to_string(value.param);
      break;
    case ValueKind::Column: out = "col:" + value.text; break;
    case ValueKind::Other: out = '?'; break;
  }
  if (!value.cast.empty()) out += "::" + value.cast;
  return out;
}

std::string column_text(const ColumnRef& column) {
  if (column.table >= 0) {
    std::string text(1, 't');
    text += std::to_string(column.table);
    text += '.';
    return text += column.name;
  }
  if (column.qualified) return "?." + column.name;
  return column.name + "@" + std::to_string(column.scope);
}

std::string features_text(uint32_t features) {
  static const std::pair<uint32_t, const char*> names[] = {
      {feature::kOrderBy, "order_by"}, {feature::kLimit, "limit"},   {feature::kDistinct, "distinct"},
      {feature::kGroupBy, "group_by"}, {feature::kHaving, "having"}, {feature::kAggregate, "aggregate"},
      {feature::kWindow, "window"},    {feature::kSetOp, "set_op"}};
  std::string out;
  for (const auto& [bit, name] : names) {
    if ((features & bit) == 0) continue;
    if (!out.empty()) out += ',';
    out += name;
  }
  return out.empty() ? "none" : out;
}

const char* yes_no(bool value) { return value ? "yes" : "no"; }

}  // namespace

const char* statement_kind_name(StatementKind kind) {
  switch (kind) {
    case StatementKind::Select: return "Select";
    case StatementKind::Insert: return "Insert";
    case StatementKind::Update: return "Update";
    case StatementKind::Delete: return "Delete";
    case StatementKind::Merge: return "Merge";
    case StatementKind::Begin: return "Begin";
    case StatementKind::Commit: return "Commit";
    case StatementKind::Rollback: return "Rollback";
    case StatementKind::Savepoint: return "Savepoint";
    case StatementKind::ReleaseSavepoint: return "ReleaseSavepoint";
    case StatementKind::RollbackToSavepoint: return "RollbackToSavepoint";
    case StatementKind::PrepareTransaction: return "PrepareTransaction";
    case StatementKind::CommitPrepared: return "CommitPrepared";
    case StatementKind::RollbackPrepared: return "RollbackPrepared";
    case StatementKind::Set: return "Set";
    case StatementKind::SetLocal: return "SetLocal";
    case StatementKind::Reset: return "Reset";
    case StatementKind::ResetAll: return "ResetAll";
    case StatementKind::DiscardAll: return "DiscardAll";
    case StatementKind::Discard: return "Discard";
    case StatementKind::Listen: return "Listen";
    case StatementKind::Unlisten: return "Unlisten";
    case StatementKind::Notify: return "Notify";
    case StatementKind::Copy: return "Copy";
    case StatementKind::Prepare: return "Prepare";
    case StatementKind::Execute: return "Execute";
    case StatementKind::Deallocate: return "Deallocate";
    case StatementKind::Ddl: return "Ddl";
    case StatementKind::Utility: return "Utility";
    case StatementKind::Empty: return "Empty";
  }
  return "?";
}

const char* table_role_name(TableRole role) {
  switch (role) {
    case TableRole::Read: return "read";
    case TableRole::Insert: return "insert";
    case TableRole::Update: return "update";
    case TableRole::Delete: return "delete";
    case TableRole::Merge: return "merge";
    case TableRole::CopyFrom: return "copy_from";
    case TableRole::CopyTo: return "copy_to";
    case TableRole::Create: return "create";
    case TableRole::Ddl: return "ddl";
    case TableRole::Maintenance: return "maintenance";
    case TableRole::Lock: return "lock";
  }
  return "?";
}

std::string describe_facts(const StatementFacts& facts) {
  std::string out = std::string("kind=") + statement_kind_name(facts.kind) +
                    " query=" + statement_kind_name(facts.query_kind) + " writes=" + yes_no(facts.writes) +
                    " returning=" + yes_no(facts.returning) + " complete=" + yes_no(facts.complete) +
                    " max_param=" + std::to_string(facts.max_param) + "\n";
  for (size_t i = 0; i < facts.scopes.size(); ++i) {
    const Scope& scope = facts.scopes[i];
    out += "scope " + std::to_string(i) + " parent=" + std::to_string(scope.parent) +
           " features=" + features_text(scope.features) + " non_table_from=" + yes_no(scope.non_table_from) +
           (scope.feeds < 0
                ? std::string()
                : " feeds=" + std::to_string(scope.feeds) + (scope.feeds_nullable ? " nullable" : "")) +
           "\n";
  }
  for (size_t i = 0; i < facts.tables.size(); ++i) {
    const TableRef& table = facts.tables[i];
    out += "table " + std::to_string(i) + " " + (table.schema.empty() ? "" : table.schema + ".") +
           table.name + (table.alias.empty() ? "" : " as " + table.alias) +
           " role=" + table_role_name(table.role) + " scope=" + std::to_string(table.scope) +
           (table.nullable ? " nullable" : "") + "\n";
  }
  for (const KeyPredicate& predicate : facts.predicates) {
    out += "predicate " + column_text(predicate.column) +
           (predicate.array     ? " = any ("
            : predicate.in_list ? " in ("
                                : " = ");
    for (size_t i = 0; i < predicate.values.size(); ++i) {
      out += (i ? ", " : "") + value_text(predicate.values[i]);
    }
    out += std::string(predicate.in_list ? ")" : "") + (predicate.usable ? " usable" : " unusable") + "\n";
  }
  for (const ColumnEquality& equality : facts.equalities) {
    const char* direction =
        equality.left_restricts_right
            ? (equality.right_restricts_left ? "" : " (left restricts right)")
            : (equality.right_restricts_left ? " (right restricts left)" : " (co-location only)");
    out += "equality " + column_text(equality.left) + " = " + column_text(equality.right) + direction + "\n";
  }
  for (const Assignment& assignment : facts.assignments) {
    out += "assignment t" + std::to_string(assignment.table) + "." + assignment.column + " = " +
           value_text(assignment.value) + "\n";
  }
  for (const InsertFacts& insert : facts.inserts) {
    out += "insert t" + std::to_string(insert.table) + " columns=(";
    for (size_t i = 0; i < insert.columns.size(); ++i) out += (i ? ", " : "") + insert.columns[i];
    out += ") rows=" + std::to_string(insert.rows.size());
    if (insert.from_select) out += " from_select";
    if (insert.select_scope >= 0) {
      out += " select@" + std::to_string(insert.select_scope) + " (";
      for (size_t i = 0; i < insert.select_values.size(); ++i) {
        const Value& item = insert.select_values[i];
        out += i ? ", " : "";
        out += item.kind == ValueKind::Column ? column_text(insert.select_columns[i])
               : item.text == "*"             ? std::string("*")
                                              : value_text(item);
      }
      out += insert.select_distinct_on ? ") distinct_on" : ")";
    }
    if (insert.default_values) out += " default_values";
    if (insert.on_conflict == OnConflict::DoNothing) out += " on_conflict=nothing";
    if (insert.on_conflict == OnConflict::DoUpdate) out += " on_conflict=update";
    for (const auto& row : insert.rows) {
      out += " | row (";
      for (size_t i = 0; i < row.size(); ++i) out += (i ? ", " : "") + value_text(row[i]);
      out += ")";
    }
    out += "\n";
  }
  return out;
}

}  // namespace sw::parser
