// Reading SQL text the way PostgreSQL's scanner splits it, for the few statements taken apart
// without libpg_query (PREPARE/EXECUTE/DEALLOCATE, drop_index.h): comments, quoted literals and
// identifiers, identifiers folded to lower case, parenthesized lists. Pure: no I/O.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sw::parser {

struct Identifier {
  std::string text;     // folded to lower case unless quoted
  bool quoted = false;  // "..." in the text
};

bool is_ident_start(char c);
bool is_ident_char(char c);
// Past a comment starting at `i` ("--" to the end of the line, nested "/* */"); `i` when none.
size_t skip_comment(std::string_view s, size_t i);
// Past spaces and comments from `i`.
size_t skip_space(std::string_view s, size_t i);
// Past a quoted token starting at `i` ('...', E'...', "...", $tag$...$tag$); `i` when none.
size_t skip_quoted(std::string_view s, size_t i);
// The identifier after spaces from `*i`, moving `*i` past it.
std::optional<Identifier> read_identifier(std::string_view s, size_t* i);
// The unquoted keyword (lower case) after spaces from `*i`: true and `*i` past it, else unmoved.
bool read_keyword(std::string_view s, size_t* i, std::string_view keyword);
// Without leading spaces and comments, trailing spaces and semicolons.
std::string trim(std::string_view s);
// The comma-separated items of a parenthesized list starting at `*i` (at '(' after spaces);
// `*i` moves past its ')'. nullopt when unbalanced.
std::optional<std::vector<std::string>> read_list(std::string_view s, size_t* i);
// Only spaces, comments and semicolons from `i` on.
bool at_end(std::string_view s, size_t i);

}  // namespace sw::parser
