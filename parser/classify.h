// Statement classification from libpg_query's JSON parse tree (internal to sw_parser).
#pragma once

#include <string_view>

#include "parser/analyze.h"
#include "parser/json_reader.h"

namespace sw::parser::detail {

// Classifies one top-level statement. `node_type` is the node's name ("SelectStmt"); `reader`
// is positioned at the node's body object, which classify consumes entirely. Fills kind and
// set_name of `out`; a node type it does not know is Utility. Returns false only if the JSON
// is malformed.
bool classify(std::string_view node_type, JsonReader& reader, StatementFacts& out);

}  // namespace sw::parser::detail
