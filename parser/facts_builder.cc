// FactsBuilder: statements (SELECT is in facts_query.cc).
//
// Contracts:
//  * scope 0 is the statement's own block (the DML statement, the top SELECT, the DDL);
//  * `writes` is set by INSERT/UPDATE/DELETE/MERGE anywhere (data-modifying CTEs too) and by
//    COPY FROM; TRUNCATE and other DDL are not "writes" (the router routes DDL on its own);
//  * DDL records the tables it names with role Create (CREATE TABLE / TABLE AS / VIEW / SELECT
//    INTO target), Ddl, Maintenance (VACUUM/ANALYZE/CLUSTER/REINDEX) or Lock; the query of
//    CREATE TABLE AS / CREATE VIEW is walked like any query (its tables are Read).
#include <algorithm>

#include "parser/facts_builder.h"

namespace sw::parser::detail {
namespace {

StatementKind kind_of_node(std::string_view node_type) {
  if (node_type == "SelectStmt") return StatementKind::Select;
  if (node_type == "InsertStmt") return StatementKind::Insert;
  if (node_type == "UpdateStmt") return StatementKind::Update;
  if (node_type == "DeleteStmt") return StatementKind::Delete;
  if (node_type == "MergeStmt") return StatementKind::Merge;
  return StatementKind::Utility;
}

// The RangeVar-valued field that names the table of these DDL / utility statements.
std::string_view relation_field(std::string_view node_type) {
  if (node_type == "AlterTableStmt" || node_type == "IndexStmt" || node_type == "CreateTrigStmt" ||
      node_type == "RuleStmt" || node_type == "RenameStmt" || node_type == "AlterObjectSchemaStmt" ||
      node_type == "RefreshMatViewStmt" || node_type == "ClusterStmt" || node_type == "ReindexStmt") {
    return "relation";
  }
  if (node_type == "CreatePolicyStmt" || node_type == "AlterPolicyStmt") return "table";
  if (node_type == "ViewStmt") return "view";
  return {};
}

}  // namespace

void FactsBuilder::build(std::string_view node_type, JsonRef body) {
  out_.node_type = std::string(node_type);
  out_.query_kind = out_.kind;
  if (node_type == "SelectStmt") {
    const int scope = select(body, -1);  // SELECT ... INTO (kind Ddl) too: records the INTO table
    // Only a block that may need a merge, or whose key lists may be cut by shard, gets a shape:
    // other plain reads pay nothing for it.
    const bool lists = std::any_of(out_.predicates.begin(), out_.predicates.end(),
                                   [](const KeyPredicate& predicate) { return predicate.in_list; });
    if (scope == 0 && (out_.scopes[0].features != 0 || lists)) select_shape(body);
  } else if (node_type == "InsertStmt") {
    insert(body, -1);
  } else if (node_type == "UpdateStmt") {
    update(body, -1);
  } else if (node_type == "DeleteStmt") {
    remove(body, -1);
  } else if (node_type == "MergeStmt") {
    merge(body, -1);
  } else if (node_type == "ExplainStmt" || node_type == "DeclareCursorStmt") {
    JsonRef query = body["query"];
    out_.query_kind = kind_of_node(query.node_type());
    statement(query, -1);
  } else if (node_type == "CopyStmt") {
    copy(body);
  } else if (out_.kind == StatementKind::Ddl || node_type == "VacuumStmt" || node_type == "ReindexStmt" ||
             node_type == "LockStmt") {
    ddl(node_type, body);
  }
  session_object(node_type, body);
  finish(body);
}

int FactsBuilder::statement(JsonRef node, int parent) {
  const std::string_view type = node.node_type();
  JsonRef body = node.body();
  if (type == "SelectStmt") return select(body, parent);
  if (type == "InsertStmt") return insert(body, parent);
  if (type == "UpdateStmt") return update(body, parent);
  if (type == "DeleteStmt") return remove(body, parent);
  if (type == "MergeStmt") return merge(body, parent);
  return -1;
}

int FactsBuilder::insert(JsonRef body, int parent) {
  const int scope = new_scope(parent);
  out_.writes = true;
  if (JsonRef with = body["withClause"]) with_clause(with, scope);
  InsertFacts facts;
  facts.table = add_table(body["relation"], TableRole::Insert, scope, false, true);
  for (JsonRef column : body["cols"]) facts.columns.push_back(column.body()["name"].string());

  JsonRef source = body["selectStmt"];
  JsonRef select_body = source.body();
  JsonRef op = select_body["op"];
  if (!source) {
    facts.default_values = true;
  } else if (source.node_type() == "SelectStmt" && select_body["valuesLists"] && !select_body["fromClause"] &&
             (!op || op.equals("SETOP_NONE")) && !select_body["withClause"]) {
    for (JsonRef row : select_body["valuesLists"]) {
      std::vector<Value> values;
      for (JsonRef item : row.body()["items"]) {
        values.push_back(value(item));
        expression(item, scope);
      }
      facts.rows.push_back(std::move(values));
    }
  } else {
    facts.from_select = true;
    const int select_scope = statement(source, scope);
    if (source.node_type() == "SelectStmt" && (!op || op.equals("SETOP_NONE")) && select_scope >= 0) {
      select_items(select_body, select_scope, facts);
    }
  }

  add_entry(scope, {"excluded", "", -1});
  if (JsonRef conflict = body["onConflictClause"]) {
    const std::string action = conflict["action"].string();
    facts.on_conflict = action == "ONCONFLICT_UPDATE" ? OnConflict::DoUpdate : OnConflict::DoNothing;
    assignments(conflict["targetList"], facts.table, scope);
    expression(conflict["whereClause"], scope);
  }
  returning(body["returningList"], scope);
  out_.inserts.push_back(std::move(facts));
  return scope;
}

// The select list of an INSERT's plain SELECT, item by item (InsertFacts::select_values).
void FactsBuilder::select_items(JsonRef select_body, int select_scope, InsertFacts& facts) const {
  facts.select_scope = select_scope;
  for (JsonRef item : select_body["targetList"]) {
    JsonRef val = item.body()["val"];
    Value item_value = value(val);
    ColumnRef item_column;
    if (item_value.kind == ValueKind::Column) {
      column(val, select_scope, item_column);
    } else if (val.node_type() == "ColumnRef") {
      item_value.text = '*';  // * or t.*
    }
    facts.select_values.push_back(std::move(item_value));
    facts.select_columns.push_back(std::move(item_column));
  }
  for (JsonRef item : select_body["distinctClause"]) {
    if (item.size() > 0) facts.select_distinct_on = true;
  }
}

int FactsBuilder::update(JsonRef body, int parent) {
  const int scope = new_scope(parent);
  out_.writes = true;
  if (JsonRef with = body["withClause"]) with_clause(with, scope);
  const int table = add_table(body["relation"], TableRole::Update, scope, false, true);
  std::vector<int> tables;
  for (JsonRef item : body["fromClause"]) from_item(item, scope, false, tables);
  assignments(body["targetList"], table, scope);
  condition(body["whereClause"], scope, Restriction{});
  returning(body["returningList"], scope);
  return scope;
}

int FactsBuilder::remove(JsonRef body, int parent) {
  const int scope = new_scope(parent);
  out_.writes = true;
  if (JsonRef with = body["withClause"]) with_clause(with, scope);
  add_table(body["relation"], TableRole::Delete, scope, false, true);
  std::vector<int> tables;
  for (JsonRef item : body["usingClause"]) from_item(item, scope, false, tables);
  condition(body["whereClause"], scope, Restriction{});
  returning(body["returningList"], scope);
  return scope;
}

int FactsBuilder::merge(JsonRef body, int parent) {
  const int scope = new_scope(parent);
  out_.writes = true;
  if (JsonRef with = body["withClause"]) with_clause(with, scope);
  add_table(body["relation"], TableRole::Merge, scope, false, true);
  std::vector<int> tables;
  from_item(body["sourceRelation"], scope, false, tables);
  expression(body["joinCondition"], scope);
  expression(body["mergeWhenClauses"], scope);
  return scope;
}

namespace {

// A DefElem of COPY's options list as a CopyOption.
CopyOption copy_option(JsonRef def) {
  CopyOption option;
  option.name = def["defname"].string();
  JsonRef arg = def["arg"];
  if (!arg) return option;
  const std::string_view type = arg.node_type();
  JsonRef value = arg.body();
  option.has_value = true;
  if (type == "String") {
    option.value = value["sval"].string();
  } else if (type == "Boolean") {
    option.value = value["boolval"].boolean() ? "true" : "false";
  } else if (type == "Integer") {
    option.value = std::to_string(value["ival"].integer(0));
  } else if (type == "Float") {
    option.value = value["fval"].string();
  } else if (type == "A_Star") {
    option.all_columns = true;
  } else if (type == "List") {
    for (JsonRef item : value["items"]) option.columns.push_back(item.body()["sval"].string());
  }
  return option;
}

}  // namespace

void FactsBuilder::copy(JsonRef body) {
  out_.copy_to_client = !body["is_from"].boolean() && !body["filename"] && !body["is_program"].boolean();
  out_.copy_from_client =
      body["is_from"].boolean() && !body["filename"] && !body["is_program"].boolean() && !body["query"];
  for (JsonRef column : body["attlist"]) out_.copy_columns.push_back(column.body()["sval"].string());
  for (JsonRef option : body["options"]) out_.copy_options.push_back(copy_option(option.body()));
  bool csv = false, header = false;
  for (JsonRef option : body["options"]) {
    JsonRef def = option.body();
    JsonRef arg = def["arg"];
    if (def["defname"].equals("format")) csv = arg.body()["sval"].equals("csv");
    if (!def["defname"].equals("header")) continue;
    // No argument is true; libpg_query leaves false and 0 out of its JSON.
    const std::string_view type = arg ? arg.node_type() : std::string_view();
    const std::string text = type == "String" ? arg.body()["sval"].string() : "";
    header = !arg || (type == "Boolean" && arg.body()["boolval"].boolean()) ||
             (type == "Integer" && arg.body()["ival"].integer(0) != 0) ||
             (type == "String" && text != "false" && text != "off" && text != "0");
  }
  out_.copy_header = csv && header;
  if (JsonRef query = body["query"]) {
    out_.query_kind = kind_of_node(query.node_type());
    statement(query, -1);
    return;
  }
  const int scope = new_scope(-1);
  const bool from = body["is_from"].boolean();
  out_.writes = from;
  add_table(body["relation"], from ? TableRole::CopyFrom : TableRole::CopyTo, scope, false, true);
}

void FactsBuilder::ddl(std::string_view node_type, JsonRef body) {
  const int scope = new_scope(-1);
  if (node_type == "CreateStmt" || node_type == "CreateForeignTableStmt") {
    JsonRef base = node_type == "CreateStmt" ? body : body["base"];
    add_table(base["relation"], TableRole::Create, scope, false, false);
    // PARTITION OF / INHERITS: the new table lives where its parent does.
    for (JsonRef parent : base["inhRelations"]) add_table(parent, TableRole::Ddl, scope, false, false);
  } else if (node_type == "CreateTableAsStmt") {
    add_table(body["into"]["rel"], TableRole::Create, scope, false, false);
    statement(body["query"], scope);
  } else if (node_type == "ViewStmt") {
    add_table(body["view"], TableRole::Create, scope, false, false);
    statement(body["query"], scope);
  } else if (node_type == "DropStmt") {
    const std::string type = body["removeType"].string();
    if (type == "OBJECT_TABLE" || type == "OBJECT_FOREIGN_TABLE" || type == "OBJECT_VIEW" ||
        type == "OBJECT_MATVIEW") {
      for (JsonRef object : body["objects"]) ddl_names(object, false, TableRole::Ddl);
    }
  } else if (node_type == "CommentStmt" || node_type == "SecLabelStmt") {
    const std::string type = body["objtype"].string();
    if (type == "OBJECT_TABLE" || type == "OBJECT_FOREIGN_TABLE" || type == "OBJECT_VIEW" ||
        type == "OBJECT_MATVIEW") {
      ddl_names(body["object"], false, TableRole::Ddl);
    } else if (type == "OBJECT_COLUMN") {
      ddl_names(body["object"], true, TableRole::Ddl);
    }
  } else if (node_type == "VacuumStmt") {
    for (JsonRef relation : body["rels"]) {
      add_table(relation.body()["relation"], TableRole::Maintenance, scope, false, false);
    }
  } else if (node_type == "LockStmt") {
    for (JsonRef relation : body["relations"]) add_table(relation, TableRole::Lock, scope, false, false);
  } else if (std::string_view field = relation_field(node_type); !field.empty()) {
    const bool maintenance = node_type == "ClusterStmt" || node_type == "ReindexStmt";
    add_table(body[field], maintenance ? TableRole::Maintenance : TableRole::Ddl, scope, false, false);
  } else {
    // TRUNCATE, GRANT ... ON TABLE, CREATE STATISTICS, and any other DDL: every relation it
    // names (an unknown statement naming a sharded table must not go to one shard silently).
    for_each_object(body, [&](JsonRef object) {
      if (object["relname"]) add_table(object, TableRole::Ddl, scope, false, false);
    });
  }
}

// A name list ("schema", "table"[, "column"]) of DROP / COMMENT ON.
void FactsBuilder::ddl_names(JsonRef name_list, bool drop_last, TableRole role) {
  std::vector<std::string> names;
  for (JsonRef item : name_list.body()["items"]) names.push_back(item.body()["sval"].string());
  if (drop_last && !names.empty()) names.pop_back();
  if (names.empty()) return;
  TableRef table;
  table.name = names.back();
  if (names.size() >= 2) table.schema = names[names.size() - 2];
  table.role = role;
  out_.tables.push_back(std::move(table));
}

void FactsBuilder::assignments(JsonRef targets, int table, int scope) {
  for (JsonRef target : targets) {
    JsonRef body = target.body();
    Assignment assignment;
    assignment.table = table;
    assignment.column = body["name"].string();
    JsonRef val = body["val"];
    if (val.node_type() != "MultiAssignRef") assignment.value = value(val);
    out_.assignments.push_back(std::move(assignment));
    expression(val, scope);
  }
}

void FactsBuilder::returning(JsonRef list, int scope) {
  if (list.size() == 0) return;
  out_.returning = true;
  expression(list, scope);
}

}  // namespace sw::parser::detail
