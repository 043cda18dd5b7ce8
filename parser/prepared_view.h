// References to the view pg_prepared_statements, and a statement's text with each replaced by a
// subquery (docs/architecture.md §5.3, "pg_prepared_statements"). In transaction pooling the
// servers hold a client's protocol-level statements under the proxy's names, shared with other
// clients, so the session answers the view from the client's own registry: it gives the
// subquery, this module finds where the relation is named and splices it in. Pure: no I/O; never
// throws.
#pragma once

#include <optional>
#include <string_view>

#include "parser/analyze.h"
#include "parser/prepared_sql.h"

namespace sw::parser {

// The relation `statement` reads is pg_prepared_statements: a TableRef of role Read named so,
// unqualified or in pg_catalog (StatementFacts::reads_prepared_statements, set by analyze()).
bool names_prepared_statements_view(const TableRef& table);

// `sql` (analyzed as `facts`) with every reference to pg_prepared_statements that a replacement
// keeps the meaning of replaced by `(subquery)`, named as the reference was (its alias, or
// "pg_prepared_statements"): in statements that run the view once when sent (not DDL, such as a
// view's definition, nor a PREPARE, whose statement runs later). Which bytes are the client's is
// kept, so a server's error position maps back. nullopt when there is nothing to replace, or a
// reference cannot be located exactly in the text (the statement then goes as written).
std::optional<ExpandedSql> replace_prepared_statements_view(std::string_view sql, const QueryFacts& facts,
                                                            std::string_view subquery);

}  // namespace sw::parser
