// The transaction identifier of PREPARE TRANSACTION / COMMIT PREPARED / ROLLBACK PREPARED, read
// from its text (docs/architecture.md §5.9, "The client's own prepared transactions"). Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sw::parser {

// The gid of such a statement when it is written as one plain string literal ('...', '' for a
// quote) without a backslash: the only form whose value the proxy can be sure of whatever the
// session's standard_conforming_strings. nullopt for any other spelling (E'', U&'', dollar
// quotes, several literals, comments the scanner refuses), which the caller refuses rather than
// guess at: shardwire must know a gid to keep clients off its own.
std::optional<std::string> plain_transaction_gid(std::string_view sql);

}  // namespace sw::parser
