// The Bind and Parse of one shard's part of a statement split by shard, in the extended protocol.
// A split INSERT (docs/architecture.md §5.11): the part's parameters are renumbered (`$k` of the
// part is the client's `$params[k - 1]`, InsertSplit::Part::params), so its Bind carries only
// those values, in that order, with their format codes, and its Parse only their type OIDs. A read
// or write whose key lists are cut by shard (§6.3): the same parameters, the values of the other
// shards' list items replaced. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "merge/plan.h"
#include "parser/analyze.h"

namespace sw::session {

// A split INSERT's extended-protocol batch: the client's Parse types, its Bind after the statement
// name (wire::BindMessage::rest, checked by wire::decode_bind), whether it described the portal,
// and the ParseComplete/BindComplete the client is owed.
struct SplitBatch {
  std::vector<uint32_t> types;
  std::string_view bind_rest;
  bool describe = false;
  std::string answered;
};

// `rest`: the client's Bind after the statement name (wire::BindMessage::rest), whose structure
// wire::decode_bind checked. Returns the rest of the part's Bind: format codes (none, one for
// all, or one per part parameter, as the client gave them), the part's values, the client's
// result format codes unchanged. `params` are 1-based client parameter numbers, each at most the
// Bind's value count.
std::string part_bind_rest(std::string_view rest, const std::vector<int>& params);

// The part's Parse parameter types: the client's type of each of its parameters (0 when the
// client gave none: PostgreSQL infers it).
std::vector<uint32_t> part_parse_types(const std::vector<uint32_t>& types, const std::vector<int>& params);

// `rest`: a Bind's format codes and values, optionally followed by its result format codes (as
// wire::decode_bind checked them). Returns it with the values of `replaced` swapped: NULL, or a
// value in the parameter's own format (a key array cut to the shard's elements, text or binary).
std::string replaced_bind_rest(std::string_view rest,
                               const std::vector<merge::ShardStatement::Param>& replaced);

// A part's messages after its BEGIN: the INSERT `sql` as a Query (no batch), or as the unnamed
// statement with only its parameters `params`, Describe portal when the client sent one, Execute
// (all rows) and Sync.
std::string part_request(const std::string& sql, const std::vector<int>& params, const SplitBatch* batch);

// A row-by-row part's messages after its BEGIN in the extended protocol (InsertSplit::row_by_row):
// per INSERT (one per row) the unnamed statement with only its parameters, Describe portal when
// the client sent one, Execute (all rows); one Sync after the last.
std::string part_rows_request(const std::vector<parser::InsertRows>& statements, const SplitBatch& batch);

}  // namespace sw::session
