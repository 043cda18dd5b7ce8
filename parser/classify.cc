// classify: top-level parse node -> StatementKind.
//
// Rules, in the terms of PostgreSQL's parse nodes:
//  * TransactionStmt: BEGIN/START -> Begin, COMMIT/END -> Commit, ROLLBACK/ABORT -> Rollback,
//    SAVEPOINT / RELEASE / ROLLBACK TO, PREPARE TRANSACTION / COMMIT PREPARED / ROLLBACK PREPARED.
//  * VariableSetStmt: SET (value, DEFAULT, FROM CURRENT) -> Set, or SetLocal with LOCAL;
//    RESET name -> Reset; RESET ALL -> ResetAll. The multi-kind forms: SET SESSION
//    CHARACTERISTICS AS TRANSACTION ... changes session defaults, so it is Set (SetLocal with
//    LOCAL) named "session_characteristics"; SET TRANSACTION ... and SET TRANSACTION SNAPSHOT
//    only affect the current transaction -> Utility.
//  * DiscardStmt: ALL -> DiscardAll, PLANS/SEQUENCES/TEMP -> Discard.
//  * SELECT (also VALUES, TABLE, set operations) -> Select, except SELECT ... INTO, which
//    creates a table (PostgreSQL runs it as CREATE TABLE AS) -> Ddl.
//  * Ddl: the statements PostgreSQL's GetCommandLogLevel() counts as LOGSTMT_DDL (CREATE,
//    ALTER, DROP, COMMENT, GRANT, SECURITY LABEL, REFRESH MATERIALIZED VIEW, ...), plus
//    TRUNCATE: it is table-wide like DDL, so a sharded table must see it on every shard.
//  * Everything else (SHOW, EXPLAIN, VACUUM, LOCK, DO, CALL, FETCH, DECLARE, ...) -> Utility.
#include "parser/classify.h"

#include <cctype>
#include <string>

namespace sw::parser::detail {
namespace {

std::string lower(const char* text) {
  std::string out = text != nullptr ? text : "";
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

StatementKind transaction_kind(const PgQuery__TransactionStmt* stmt) {
  switch (stmt->kind) {
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_BEGIN:
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_START: return StatementKind::Begin;
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_COMMIT: return StatementKind::Commit;
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_ROLLBACK: return StatementKind::Rollback;
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_SAVEPOINT: return StatementKind::Savepoint;
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_RELEASE:
      return StatementKind::ReleaseSavepoint;
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_ROLLBACK_TO:
      return StatementKind::RollbackToSavepoint;
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_PREPARE:
      return StatementKind::PrepareTransaction;
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_COMMIT_PREPARED:
      return StatementKind::CommitPrepared;
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_ROLLBACK_PREPARED:
      return StatementKind::RollbackPrepared;
    default: return StatementKind::Utility;
  }
}

void classify_set(const PgQuery__VariableSetStmt* stmt, StatementFacts& out) {
  const StatementKind set_kind = stmt->is_local ? StatementKind::SetLocal : StatementKind::Set;
  switch (stmt->kind) {
    case PG_QUERY__VARIABLE_SET_KIND__VAR_SET_VALUE:
    case PG_QUERY__VARIABLE_SET_KIND__VAR_SET_DEFAULT:
    case PG_QUERY__VARIABLE_SET_KIND__VAR_SET_CURRENT:
      out.kind = set_kind;
      out.set_name = lower(stmt->name);
      return;
    case PG_QUERY__VARIABLE_SET_KIND__VAR_SET_MULTI:
      // The grammar names these "TRANSACTION", "SESSION CHARACTERISTICS", "TRANSACTION SNAPSHOT".
      if (lower(stmt->name) == "session characteristics") {
        out.kind = set_kind;
        out.set_name = "session_characteristics";
      } else {
        out.kind = StatementKind::Utility;
      }
      return;
    case PG_QUERY__VARIABLE_SET_KIND__VAR_RESET:
      out.kind = StatementKind::Reset;
      out.set_name = lower(stmt->name);
      return;
    case PG_QUERY__VARIABLE_SET_KIND__VAR_RESET_ALL:
      out.kind = StatementKind::ResetAll;
      return;
    default:
      out.kind = StatementKind::Utility;
      return;
  }
}

// SELECT ... INTO names its target on the leftmost simple SELECT of a set operation.
bool selects_into(const PgQuery__SelectStmt* stmt) {
  for (; stmt != nullptr; stmt = stmt->larg) {
    if (stmt->into_clause != nullptr) return true;
    if (stmt->op != PG_QUERY__SET_OPERATION__SETOP_UNION &&
        stmt->op != PG_QUERY__SET_OPERATION__SETOP_INTERSECT &&
        stmt->op != PG_QUERY__SET_OPERATION__SETOP_EXCEPT) {
      return false;
    }
  }
  return false;
}

bool is_ddl(PgQuery__Node__NodeCase node_case) {
  switch (node_case) {
    case PG_QUERY__NODE__NODE_ALTER_TABLE_STMT:
    case PG_QUERY__NODE__NODE_ALTER_DOMAIN_STMT:
    case PG_QUERY__NODE__NODE_GRANT_STMT:
    case PG_QUERY__NODE__NODE_GRANT_ROLE_STMT:
    case PG_QUERY__NODE__NODE_ALTER_DEFAULT_PRIVILEGES_STMT:
    case PG_QUERY__NODE__NODE_CLUSTER_STMT:
    case PG_QUERY__NODE__NODE_CREATE_STMT:
    case PG_QUERY__NODE__NODE_DEFINE_STMT:
    case PG_QUERY__NODE__NODE_DROP_STMT:
    case PG_QUERY__NODE__NODE_TRUNCATE_STMT:
    case PG_QUERY__NODE__NODE_COMMENT_STMT:
    case PG_QUERY__NODE__NODE_INDEX_STMT:
    case PG_QUERY__NODE__NODE_CREATE_FUNCTION_STMT:
    case PG_QUERY__NODE__NODE_ALTER_FUNCTION_STMT:
    case PG_QUERY__NODE__NODE_RENAME_STMT:
    case PG_QUERY__NODE__NODE_RULE_STMT:
    case PG_QUERY__NODE__NODE_VIEW_STMT:
    case PG_QUERY__NODE__NODE_CREATE_DOMAIN_STMT:
    case PG_QUERY__NODE__NODE_CREATEDB_STMT:
    case PG_QUERY__NODE__NODE_DROPDB_STMT:
    case PG_QUERY__NODE__NODE_CREATE_TABLE_AS_STMT:
    case PG_QUERY__NODE__NODE_CREATE_SEQ_STMT:
    case PG_QUERY__NODE__NODE_ALTER_SEQ_STMT:
    case PG_QUERY__NODE__NODE_CREATE_TRIG_STMT:
    case PG_QUERY__NODE__NODE_CREATE_PLANG_STMT:
    case PG_QUERY__NODE__NODE_CREATE_ROLE_STMT:
    case PG_QUERY__NODE__NODE_ALTER_ROLE_STMT:
    case PG_QUERY__NODE__NODE_DROP_ROLE_STMT:
    case PG_QUERY__NODE__NODE_CREATE_SCHEMA_STMT:
    case PG_QUERY__NODE__NODE_ALTER_DATABASE_STMT:
    case PG_QUERY__NODE__NODE_ALTER_DATABASE_REFRESH_COLL_STMT:
    case PG_QUERY__NODE__NODE_ALTER_DATABASE_SET_STMT:
    case PG_QUERY__NODE__NODE_ALTER_ROLE_SET_STMT:
    case PG_QUERY__NODE__NODE_CREATE_CONVERSION_STMT:
    case PG_QUERY__NODE__NODE_CREATE_CAST_STMT:
    case PG_QUERY__NODE__NODE_CREATE_OP_CLASS_STMT:
    case PG_QUERY__NODE__NODE_CREATE_OP_FAMILY_STMT:
    case PG_QUERY__NODE__NODE_ALTER_OP_FAMILY_STMT:
    case PG_QUERY__NODE__NODE_CREATE_TABLE_SPACE_STMT:
    case PG_QUERY__NODE__NODE_DROP_TABLE_SPACE_STMT:
    case PG_QUERY__NODE__NODE_ALTER_OBJECT_DEPENDS_STMT:
    case PG_QUERY__NODE__NODE_ALTER_OBJECT_SCHEMA_STMT:
    case PG_QUERY__NODE__NODE_ALTER_OWNER_STMT:
    case PG_QUERY__NODE__NODE_ALTER_OPERATOR_STMT:
    case PG_QUERY__NODE__NODE_ALTER_TYPE_STMT:
    case PG_QUERY__NODE__NODE_DROP_OWNED_STMT:
    case PG_QUERY__NODE__NODE_REASSIGN_OWNED_STMT:
    case PG_QUERY__NODE__NODE_COMPOSITE_TYPE_STMT:
    case PG_QUERY__NODE__NODE_CREATE_ENUM_STMT:
    case PG_QUERY__NODE__NODE_CREATE_RANGE_STMT:
    case PG_QUERY__NODE__NODE_ALTER_ENUM_STMT:
    case PG_QUERY__NODE__NODE_ALTER_TSDICTIONARY_STMT:
    case PG_QUERY__NODE__NODE_ALTER_TSCONFIGURATION_STMT:
    case PG_QUERY__NODE__NODE_CREATE_FDW_STMT:
    case PG_QUERY__NODE__NODE_ALTER_FDW_STMT:
    case PG_QUERY__NODE__NODE_CREATE_FOREIGN_SERVER_STMT:
    case PG_QUERY__NODE__NODE_ALTER_FOREIGN_SERVER_STMT:
    case PG_QUERY__NODE__NODE_CREATE_USER_MAPPING_STMT:
    case PG_QUERY__NODE__NODE_ALTER_USER_MAPPING_STMT:
    case PG_QUERY__NODE__NODE_DROP_USER_MAPPING_STMT:
    case PG_QUERY__NODE__NODE_ALTER_TABLE_SPACE_OPTIONS_STMT:
    case PG_QUERY__NODE__NODE_ALTER_TABLE_MOVE_ALL_STMT:
    case PG_QUERY__NODE__NODE_SEC_LABEL_STMT:
    case PG_QUERY__NODE__NODE_CREATE_FOREIGN_TABLE_STMT:
    case PG_QUERY__NODE__NODE_IMPORT_FOREIGN_SCHEMA_STMT:
    case PG_QUERY__NODE__NODE_CREATE_EXTENSION_STMT:
    case PG_QUERY__NODE__NODE_ALTER_EXTENSION_STMT:
    case PG_QUERY__NODE__NODE_ALTER_EXTENSION_CONTENTS_STMT:
    case PG_QUERY__NODE__NODE_CREATE_EVENT_TRIG_STMT:
    case PG_QUERY__NODE__NODE_ALTER_EVENT_TRIG_STMT:
    case PG_QUERY__NODE__NODE_REFRESH_MAT_VIEW_STMT:
    case PG_QUERY__NODE__NODE_ALTER_SYSTEM_STMT:
    case PG_QUERY__NODE__NODE_CREATE_POLICY_STMT:
    case PG_QUERY__NODE__NODE_ALTER_POLICY_STMT:
    case PG_QUERY__NODE__NODE_CREATE_TRANSFORM_STMT:
    case PG_QUERY__NODE__NODE_CREATE_AM_STMT:
    case PG_QUERY__NODE__NODE_CREATE_PUBLICATION_STMT:
    case PG_QUERY__NODE__NODE_ALTER_PUBLICATION_STMT:
    case PG_QUERY__NODE__NODE_CREATE_SUBSCRIPTION_STMT:
    case PG_QUERY__NODE__NODE_ALTER_SUBSCRIPTION_STMT:
    case PG_QUERY__NODE__NODE_DROP_SUBSCRIPTION_STMT:
    case PG_QUERY__NODE__NODE_CREATE_STATS_STMT:
    case PG_QUERY__NODE__NODE_ALTER_STATS_STMT:
    case PG_QUERY__NODE__NODE_ALTER_COLLATION_STMT:
      return true;
    default:
      return false;
  }
}

}  // namespace

void classify(const PgQuery__Node* stmt, StatementFacts& out) {
  out.kind = StatementKind::Utility;
  if (stmt == nullptr) return;
  switch (stmt->node_case) {
    case PG_QUERY__NODE__NODE_SELECT_STMT:
      out.kind = selects_into(stmt->select_stmt) ? StatementKind::Ddl : StatementKind::Select;
      return;
    case PG_QUERY__NODE__NODE_INSERT_STMT: out.kind = StatementKind::Insert; return;
    case PG_QUERY__NODE__NODE_UPDATE_STMT: out.kind = StatementKind::Update; return;
    case PG_QUERY__NODE__NODE_DELETE_STMT: out.kind = StatementKind::Delete; return;
    case PG_QUERY__NODE__NODE_MERGE_STMT: out.kind = StatementKind::Merge; return;
    case PG_QUERY__NODE__NODE_TRANSACTION_STMT:
      if (stmt->transaction_stmt != nullptr) out.kind = transaction_kind(stmt->transaction_stmt);
      return;
    case PG_QUERY__NODE__NODE_VARIABLE_SET_STMT:
      if (stmt->variable_set_stmt != nullptr) classify_set(stmt->variable_set_stmt, out);
      return;
    case PG_QUERY__NODE__NODE_DISCARD_STMT:
      if (stmt->discard_stmt == nullptr) return;
      out.kind = stmt->discard_stmt->target == PG_QUERY__DISCARD_MODE__DISCARD_ALL
                     ? StatementKind::DiscardAll
                     : StatementKind::Discard;
      return;
    case PG_QUERY__NODE__NODE_LISTEN_STMT: out.kind = StatementKind::Listen; return;
    case PG_QUERY__NODE__NODE_UNLISTEN_STMT: out.kind = StatementKind::Unlisten; return;
    case PG_QUERY__NODE__NODE_NOTIFY_STMT: out.kind = StatementKind::Notify; return;
    case PG_QUERY__NODE__NODE_COPY_STMT: out.kind = StatementKind::Copy; return;
    case PG_QUERY__NODE__NODE_PREPARE_STMT: out.kind = StatementKind::Prepare; return;
    case PG_QUERY__NODE__NODE_EXECUTE_STMT: out.kind = StatementKind::Execute; return;
    case PG_QUERY__NODE__NODE_DEALLOCATE_STMT: out.kind = StatementKind::Deallocate; return;
    default:
      out.kind = is_ddl(stmt->node_case) ? StatementKind::Ddl : StatementKind::Utility;
      return;
  }
}

}  // namespace sw::parser::detail
