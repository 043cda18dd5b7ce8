// classify: top-level parse node -> StatementKind.
//
// Rules, in the terms of PostgreSQL's parse nodes:
//  * TransactionStmt: BEGIN/START -> Begin, COMMIT/END -> Commit, ROLLBACK/ABORT -> Rollback,
//    SAVEPOINT / RELEASE / ROLLBACK TO, PREPARE TRANSACTION / COMMIT PREPARED / ROLLBACK PREPARED.
//  * VariableSetStmt: SET (value, DEFAULT, FROM CURRENT) -> Set, or SetLocal with LOCAL;
//    RESET name -> Reset; RESET ALL -> ResetAll. Of the multi forms, SET SESSION
//    CHARACTERISTICS AS TRANSACTION ... changes session defaults, so it is Set (SetLocal with
//    LOCAL) named "session_characteristics"; SET TRANSACTION ... and SET TRANSACTION SNAPSHOT
//    only affect the current transaction -> Utility. set_name is lower-cased.
//  * DiscardStmt: ALL -> DiscardAll, PLANS/SEQUENCES/TEMP -> Discard.
//  * SELECT (also VALUES, TABLE, set operations) -> Select, except SELECT ... INTO, which
//    creates a table (PostgreSQL runs it as CREATE TABLE AS) -> Ddl.
//  * Ddl: the statements PostgreSQL's GetCommandLogLevel() counts as LOGSTMT_DDL (CREATE,
//    ALTER, DROP, COMMENT, GRANT, SECURITY LABEL, REFRESH MATERIALIZED VIEW, ...), plus
//    TRUNCATE: it is table-wide like DDL, so a sharded table must see it on every shard.
//  * Everything else (SHOW, EXPLAIN, VACUUM, LOCK, DO, CALL, FETCH, DECLARE, ...) -> Utility.
//
// Node and field names are PostgreSQL's own (nodes/parsenodes.h), which libpg_query's JSON uses
// verbatim; enum values are their C names.
#include "parser/classify.h"

#include <cctype>
#include <string>
#include <unordered_map>

namespace sw::parser::detail {
namespace {

using Kinds = std::unordered_map<std::string_view, StatementKind>;

// The LOGSTMT_DDL statements of PostgreSQL's GetCommandLogLevel(), plus TruncateStmt.
// clang-format off
constexpr std::string_view kDdlNodeTypes[] = {
    "AlterTableStmt", "AlterDomainStmt", "GrantStmt", "GrantRoleStmt", "AlterDefaultPrivilegesStmt",
    "ClusterStmt", "CreateStmt", "DefineStmt", "DropStmt", "TruncateStmt", "CommentStmt",
    "IndexStmt", "CreateFunctionStmt", "AlterFunctionStmt", "RenameStmt", "RuleStmt", "ViewStmt",
    "CreateDomainStmt", "CreatedbStmt", "DropdbStmt", "CreateTableAsStmt", "CreateSeqStmt",
    "AlterSeqStmt", "CreateTrigStmt", "CreatePLangStmt", "CreateRoleStmt", "AlterRoleStmt",
    "DropRoleStmt", "CreateSchemaStmt", "AlterDatabaseStmt", "AlterDatabaseRefreshCollStmt",
    "AlterDatabaseSetStmt", "AlterRoleSetStmt", "CreateConversionStmt", "CreateCastStmt",
    "CreateOpClassStmt", "CreateOpFamilyStmt", "AlterOpFamilyStmt", "CreateTableSpaceStmt",
    "DropTableSpaceStmt", "AlterObjectDependsStmt", "AlterObjectSchemaStmt", "AlterOwnerStmt",
    "AlterOperatorStmt", "AlterTypeStmt", "DropOwnedStmt", "ReassignOwnedStmt", "CompositeTypeStmt",
    "CreateEnumStmt", "CreateRangeStmt", "AlterEnumStmt", "AlterTSDictionaryStmt",
    "AlterTSConfigurationStmt", "CreateFdwStmt", "AlterFdwStmt", "CreateForeignServerStmt",
    "AlterForeignServerStmt", "CreateUserMappingStmt", "AlterUserMappingStmt",
    "DropUserMappingStmt", "AlterTableSpaceOptionsStmt", "AlterTableMoveAllStmt", "SecLabelStmt",
    "CreateForeignTableStmt", "ImportForeignSchemaStmt", "CreateExtensionStmt",
    "AlterExtensionStmt", "AlterExtensionContentsStmt", "CreateEventTrigStmt", "AlterEventTrigStmt",
    "RefreshMatViewStmt", "AlterSystemStmt", "CreatePolicyStmt", "AlterPolicyStmt",
    "CreateTransformStmt", "CreateAmStmt", "CreatePublicationStmt", "AlterPublicationStmt",
    "CreateSubscriptionStmt", "AlterSubscriptionStmt", "DropSubscriptionStmt", "CreateStatsStmt",
    "AlterStatsStmt", "AlterCollationStmt"};
// clang-format on

// Node types whose kind needs nothing from the body.
const Kinds& kinds_by_node_type() {
  static const Kinds* const kinds = [] {
    auto* map = new Kinds{
        {"InsertStmt", StatementKind::Insert},         {"UpdateStmt", StatementKind::Update},
        {"DeleteStmt", StatementKind::Delete},         {"MergeStmt", StatementKind::Merge},
        {"ListenStmt", StatementKind::Listen},         {"UnlistenStmt", StatementKind::Unlisten},
        {"NotifyStmt", StatementKind::Notify},         {"CopyStmt", StatementKind::Copy},
        {"PrepareStmt", StatementKind::Prepare},       {"ExecuteStmt", StatementKind::Execute},
        {"DeallocateStmt", StatementKind::Deallocate},
    };
    for (std::string_view ddl : kDdlNodeTypes) {
      map->emplace(ddl, StatementKind::Ddl);
    }
    return map;
  }();
  return *kinds;
}

const Kinds& transaction_kinds() {
  static const Kinds* const kinds = new Kinds{
      {"TRANS_STMT_BEGIN", StatementKind::Begin},
      {"TRANS_STMT_START", StatementKind::Begin},
      {"TRANS_STMT_COMMIT", StatementKind::Commit},
      {"TRANS_STMT_ROLLBACK", StatementKind::Rollback},
      {"TRANS_STMT_SAVEPOINT", StatementKind::Savepoint},
      {"TRANS_STMT_RELEASE", StatementKind::ReleaseSavepoint},
      {"TRANS_STMT_ROLLBACK_TO", StatementKind::RollbackToSavepoint},
      {"TRANS_STMT_PREPARE", StatementKind::PrepareTransaction},
      {"TRANS_STMT_COMMIT_PREPARED", StatementKind::CommitPrepared},
      {"TRANS_STMT_ROLLBACK_PREPARED", StatementKind::RollbackPrepared},
  };
  return *kinds;
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

void classify_set(JsonRef body, StatementFacts& out) {
  const std::string kind = body["kind"].string();
  const std::string name = body["name"].string();
  const StatementKind set_kind = body["is_local"].boolean() ? StatementKind::SetLocal : StatementKind::Set;
  if (kind == "VAR_SET_VALUE" || kind == "VAR_SET_DEFAULT" || kind == "VAR_SET_CURRENT") {
    out.kind = set_kind;
    out.set_name = lower(name);
  } else if (kind == "VAR_SET_MULTI") {
    // The grammar names these "TRANSACTION", "SESSION CHARACTERISTICS", "TRANSACTION SNAPSHOT".
    if (name == "SESSION CHARACTERISTICS") {
      out.kind = set_kind;
      out.set_name = "session_characteristics";
    }
  } else if (kind == "VAR_RESET") {
    out.kind = StatementKind::Reset;
    out.set_name = lower(name);
  } else if (kind == "VAR_RESET_ALL") {
    out.kind = StatementKind::ResetAll;
  }
}

// SELECT ... INTO puts intoClause on the leftmost simple SELECT of a set operation, reached
// through "larg" (a SelectStmt written without a node wrapper; a loop: set operations nest
// without limit).
bool select_has_into(JsonRef select) {
  for (JsonRef node = select; node; node = node["larg"]) {
    if (node["intoClause"]) return true;
  }
  return false;
}

}  // namespace

void classify(std::string_view node_type, JsonRef body, StatementFacts& out) {
  out.kind = StatementKind::Utility;
  if (node_type == "SelectStmt") {
    out.kind = select_has_into(body) ? StatementKind::Ddl : StatementKind::Select;
  } else if (node_type == "TransactionStmt") {
    auto it = transaction_kinds().find(body["kind"].string());
    if (it != transaction_kinds().end()) out.kind = it->second;
  } else if (node_type == "DiscardStmt") {
    out.kind = body["target"].string() == "DISCARD_ALL" ? StatementKind::DiscardAll : StatementKind::Discard;
  } else if (node_type == "VariableSetStmt") {
    classify_set(body, out);
  } else {
    auto it = kinds_by_node_type().find(node_type);
    if (it != kinds_by_node_type().end()) out.kind = it->second;
  }
}

}  // namespace sw::parser::detail
