// Statement classification from libpg_query's JSON parse tree (internal to sw_parser).
#pragma once

#include <string_view>

#include "parser/analyze.h"
#include "parser/json_tree.h"

namespace sw::parser::detail {

// Classifies one top-level statement. `node_type` is the node's name ("SelectStmt"), `body`
// its body object. Fills kind and set_name of `out`; a node type it does not know is Utility.
void classify(std::string_view node_type, JsonRef body, StatementFacts& out);

}  // namespace sw::parser::detail
