// Statement facts from libpg_query. This module is the only user of libpg_query.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace sw::parser {

enum class StatementKind {
  Select, Insert, Update, Delete, Merge,
  Begin, Commit, Rollback, Savepoint, ReleaseSavepoint, RollbackToSavepoint,
  PrepareTransaction, CommitPrepared, RollbackPrepared,
  Set,            // SET name ... (session level)
  SetLocal,       // SET LOCAL name ... (transaction level: not session state)
  Reset,          // RESET name
  ResetAll,       // RESET ALL
  DiscardAll,     // DISCARD ALL
  Discard,        // DISCARD PLANS/SEQUENCES/TEMP
  Listen, Unlisten, Notify,
  Copy,
  Prepare, Execute, Deallocate,  // SQL-level PREPARE/EXECUTE/DEALLOCATE
  Ddl,            // CREATE/ALTER/DROP/...
  Utility,        // SHOW, EXPLAIN, VACUUM, ... anything else
  Empty,          // no statement (only comments/whitespace)
};

struct StatementFacts {
  StatementKind kind = StatementKind::Utility;
  std::string set_name;          // Set/SetLocal/Reset: lower-cased GUC name ("search_path")
  std::string text;              // this statement's own SQL text (from the split)
};

struct QueryFacts {
  std::vector<StatementFacts> statements;  // one per statement of a (multi-)statement string
};

// Parses `sql`. A syntax error is returned as a client fault with SQLSTATE 42601 and the
// parser's message; callers usually forward such SQL to the server so the client sees the
// server's own error.
//
// Results are cached per thread by exact text (LRU, 1024 entries; texts over 8 KiB and errors
// are not cached), so analyzing the same text again on the same thread returns the same pointer.
// Never throws.
Result<std::shared_ptr<const QueryFacts>> analyze(std::string_view sql);

// analyze() without the cache: always parses. For benchmarks, fuzzing and tests.
Result<std::shared_ptr<const QueryFacts>> analyze_uncached(std::string_view sql);

}  // namespace sw::parser
