// An error of a statement the proxy rewrote (an EXECUTE run as the statement it names,
// docs/architecture.md §5.7) says where it happened in the rewritten text: its position is moved
// back into the client's text, or dropped where the client's text has no such place (inside the
// prepared statement: PostgreSQL gives no position there either). Pure: no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "parser/prepared_sql.h"

namespace sw::session {

// A client's text the proxy sent rewritten, with which bytes of the rewrite are the client's.
struct RewrittenText {
  std::string client_sql;
  parser::ExpandedSql server_sql;
};

// The ErrorResponse ('E', length, fields) of `body` with its 'P' field (PostgreSQL's cursor
// position: characters, 1-based) set to `position`, or removed when nullopt. Empty when `body`
// has no 'P' field or is not a field list.
std::string error_with_position(std::string_view body, std::optional<uint32_t> position);

// The 'P' field of an ErrorResponse body; nullopt when absent or not a number.
std::optional<uint32_t> error_position(std::string_view body);

// A position in `server_sql` (the rewritten text the server ran) as a position in `client_sql`,
// through the pieces of the rewrite; nullopt when it falls outside the client's own bytes. Texts
// are UTF-8 (a position counts characters).
std::optional<uint32_t> client_position(uint32_t position, std::string_view server_sql,
                                        std::string_view client_sql, const parser::ExpandedSql& rewrite);

}  // namespace sw::session
