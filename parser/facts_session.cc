// FactsBuilder: what a statement leaves in the server's session beyond its transaction (objects
// in the session's temporary schema, WITH HOLD cursors, loaded libraries), and the savepoint a
// transaction statement names. Read from PostgreSQL's raw parse nodes (nodes/parsenodes.h), never
// the text.
#include "parser/facts_builder.h"

namespace sw::parser::detail {
namespace {

// PostgreSQL's CURSOR_OPT_HOLD (nodes/parsenodes.h).
constexpr int64_t kCursorOptHold = 0x0020;

// A schema name that is the session's temporary schema: pg_temp, or its pg_temp_N spelling.
bool is_temp_schema(std::string_view schema) { return schema.rfind("pg_temp", 0) == 0; }

// A RangeVar (CREATE TABLE/VIEW/SEQUENCE target) that lives in the temporary schema: TEMP /
// TEMPORARY (relpersistence 't') or qualified with pg_temp.
bool temp_relation(JsonRef range_var) {
  return range_var["relpersistence"].equals("t") || is_temp_schema(range_var["schemaname"].string());
}

// A qualified name list (funcname, defnames, typeName) whose schema is the temporary one.
bool temp_name_list(JsonRef names) {
  return names.size() >= 2 && is_temp_schema((*names.begin()).body()["sval"].string());
}

// SELECT ... INTO: the INTO clause of the leftmost simple SELECT (see classify.cc).
JsonRef select_into(JsonRef select) {
  for (JsonRef node = select; node; node = node["larg"]) {
    if (JsonRef into = node["intoClause"]) return into;
  }
  return JsonRef();
}

SessionObject temp_object(std::string_view node_type, JsonRef body) {
  if (node_type == "CreateStmt") {
    return temp_relation(body["relation"]) && !body["oncommit"].equals("ONCOMMIT_DROP")
               ? SessionObject::TempTable
               : SessionObject::None;
  }
  if (node_type == "CreateTableAsStmt" || node_type == "SelectStmt") {
    JsonRef into = node_type == "SelectStmt" ? select_into(body) : body["into"];
    return into && temp_relation(into["rel"]) && !into["onCommit"].equals("ONCOMMIT_DROP")
               ? SessionObject::TempTable
               : SessionObject::None;
  }
  if (node_type == "ViewStmt")
    return temp_relation(body["view"]) ? SessionObject::TempView : SessionObject::None;
  if (node_type == "CreateSeqStmt")
    return temp_relation(body["sequence"]) ? SessionObject::TempSequence : SessionObject::None;
  if (node_type == "CreateFunctionStmt")
    return temp_name_list(body["funcname"]) ? SessionObject::TempRoutine : SessionObject::None;
  bool temp_type = false;
  if (node_type == "DefineStmt") temp_type = temp_name_list(body["defnames"]);
  if (node_type == "CreateEnumStmt" || node_type == "CreateRangeStmt")
    temp_type = temp_name_list(body["typeName"]);
  if (node_type == "CreateDomainStmt") temp_type = temp_name_list(body["domainname"]);
  if (node_type == "CompositeTypeStmt") temp_type = temp_relation(body["typevar"]);
  if (temp_type) return SessionObject::TempType;
  if (node_type == "DeclareCursorStmt" && (body["options"].integer(0) & kCursorOptHold) != 0)
    return SessionObject::HoldCursor;
  if (node_type == "LoadStmt") return SessionObject::Library;
  return SessionObject::None;
}

}  // namespace

void FactsBuilder::session_object(std::string_view node_type, JsonRef body) {
  if (node_type == "TransactionStmt") {
    out_.savepoint_name = body["savepoint_name"].string();
    return;
  }
  out_.session_object = temp_object(node_type, body);
}

}  // namespace sw::parser::detail
