// What every shard runs for an UPDATE that moves rows between shards (docs/architecture.md §6.3,
// "Updates that move rows"), in one extended batch after its BEGIN: the client's own UPDATE parsed
// and described, so the RETURNING's RowDescription is PostgreSQL's own for that UPDATE (table and
// column of each item included), then the move's statement parsed as the unnamed statement, bound
// to the client's values with text results, described and run whole (KeyMovePlan reads every
// row: its bucket, its columns, the client's items). Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sw::session {

// `client_sql`: the client's UPDATE; `move_sql`: the route's statement; `types`: the client's Parse
// parameter types; `bind_rest`: the Bind after the statement name (wire::BindMessage::rest) the
// move's statement runs with, empty for the simple protocol (no values).
std::string key_move_request(std::string_view client_sql, std::string_view move_sql,
                             const std::vector<uint32_t>& types, std::string_view bind_rest);

// The client's Bind after the statement name (checked by wire::decode_bind) with its result
// format codes dropped: the shards answer a move in text.
std::string text_results_bind_rest(std::string_view rest);

}  // namespace sw::session
