// What a COPY sharded_table [(columns)] FROM STDIN needs to split the client's rows by key
// (docs/architecture.md §5.10), read from the statement's facts. Pure: no I/O.
#pragma once

#include <string>

#include "common/status.h"
#include "parser/analyze.h"
#include "router/router.h"
#include "wire/copy_rows.h"

namespace sw::session {

struct CopyInPlan {
  wire::CopyInOptions options;  // the client's format and options; key_field when key_known
  // The statement has a column list, so the key's position is known. Else the shards' catalog
  // says where it is (sqltext::copy_key_position_sql, key_position_sql).
  bool key_known = false;
  std::string key_position_sql;
};

// The plan, or why the COPY cannot be split: an option PostgreSQL would refuse (22023, 42601,
// 0A000 with its message), ENCODING (0A000: the key would be hashed in the wrong encoding), a
// column list without the key (0A000: the row's shard would not be known).
Result<CopyInPlan> plan_copy_in(const parser::StatementFacts& statement, const router::TableRule& rule);

// COPY reference_table FROM STDIN (its CopyData goes whole to every shard, docs/architecture.md
// §6.4): an empty plan, or 0A000 when it reads a file or program (each shard would read it).
Result<CopyInPlan> plan_reference_copy_in(const parser::StatementFacts& statement, const std::string& table);

}  // namespace sw::session
