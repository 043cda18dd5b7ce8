// A small SQL scanner that finds plain literals, for the normalized statement cache
// (internal to sw_parser).
//
// normalize_sql() replaces every standard-quoted string ('...', '' for a quote) and every
// unsigned number by a two-byte marker ("\x01" plus 'i' integer that fits int4, 'n' other
// number, 's' string) and keeps everything else verbatim. Two texts with the same key differ
// only in the values of those literals and, since literals of one marker kind are scanned alike
// by PostgreSQL, parse to the same tree up to those values. It follows PostgreSQL 15's scan.l
// with standard_conforming_strings on: comments (nested /* */, --), quoted identifiers,
// dollar quotes, E'' / B'' / X'' / N'' strings (kept verbatim), $n parameters. It refuses
// (returns false) anything it does not model exactly: U&'' strings, adjacent or continued
// string literals, numbers with trailing junk, unterminated tokens, the marker byte itself, and
// any NUL byte (so a text PostgreSQL refuses is always parsed, and refused).
// analyze() additionally checks, on the text that creates a cache entry, that every literal the
// scanner found is a constant in libpg_query's tree (sql_lexer is never trusted alone).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sw::parser::detail {

enum class SlotKind : char { Integer = 'i', Numeric = 'n', String = 's' };

struct LiteralSlot {
  uint32_t begin = 0;  // [begin, end) in the SQL text; a string includes its quotes
  uint32_t end = 0;
  uint32_t key_begin = 0;  // offset of its marker in the key
  SlotKind kind = SlotKind::String;
};

struct NormalizedSql {
  std::string key;
  std::vector<LiteralSlot> slots;  // in text order
};

constexpr uint32_t kMarkerBytes = 2;

// Fills `out`; false when the text has something the scanner does not model (see above).
bool normalize_sql(std::string_view sql, NormalizedSql& out);

// The value of a slot in `sql`: a number as written, a string decoded ('' -> ').
std::string slot_value(std::string_view sql, const LiteralSlot& slot);
// The same into `out` (replacing its contents, reusing its buffer).
void slot_value_into(std::string_view sql, const LiteralSlot& slot, std::string& out);

// The words, $n parameters and the punctuation `(`, `)`, `[`, `]`, `,` of a text, outside comments, string
// literals, quoted identifiers and dollar quotes (a word that starts an E'' / B'' / X'' / N''
// string covers the string). False when normalize_sql() would refuse the text.
struct SqlToken {
  enum class Kind : uint8_t { Word, Param, Punctuation };
  Kind kind = Kind::Word;
  uint32_t begin = 0;  // [begin, end) in the text
  uint32_t end = 0;
};
bool scan_tokens(std::string_view sql, std::vector<SqlToken>& out);
// Whether `token` of `sql` is the word `lower_word` (given in lower case), in any letter case.
bool token_is_word(std::string_view sql, const SqlToken& token, std::string_view lower_word);

// An offset in the key (which must not be inside a marker) and how many slots' markers end at
// or before it. Both are the same for every text of one key, so a template finds them once and
// maps the offset into each text without a search.
struct KeyOffset {
  uint32_t offset = 0;
  uint32_t slots_before = 0;
};
KeyOffset key_offset_at(const NormalizedSql& normalized, uint32_t key_offset);
// Offset in the SQL text of an offset in the key; `normalized` is any text's of that key.
uint32_t key_to_sql_offset(const NormalizedSql& normalized, KeyOffset at);
// Offset in the key of an offset in the SQL text outside the slots, or of a slot's begin.
uint32_t sql_to_key_offset(const NormalizedSql& normalized, uint32_t sql_offset);
// Index of the slot starting at `sql_offset`, or -1.
int slot_at(const NormalizedSql& normalized, uint32_t sql_offset);

// The text of the number token at `offset` ("42", "1.5e3"); for a '-' at `offset` followed by
// spaces and a number, "-" and that number. False when there is no such token.
bool number_at(std::string_view sql, size_t offset, std::string& out);

}  // namespace sw::parser::detail
