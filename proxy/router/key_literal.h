// The integer value of an integer shard key that a literal or parameter stands for, by PostgreSQL's
// own type rules (docs/architecture.md §6.2, "Key values"): a number token is int4, int8 or
// numeric (1.0, 2e0, 99999999999999999999), a cast gives its type (float8 '2.5', 1.5::int8), a
// quoted string without one is read as the type it meets.
//
// Compared with the key (WHERE k = v, k IN (...), k = ANY(ARRAY[...])), every item meets the key in
// one type, the widest of the key and the items (int < numeric < real < double precision, as
// PostgreSQL resolves the operator and an IN list's common type): the key equals an integer, no
// row (1.5, NaN, a value outside the key's type: PostgreSQL raises no error), or, for a float
// beyond 2^53 that several keys round to, an undecidable value.
// Assigned to the key (INSERT VALUES, UPDATE SET, ON CONFLICT DO UPDATE SET, INSERT ... SELECT of a
// constant), each value is cast to the key's type on its own: numeric rounds half away from zero,
// real and double precision round half to even (rint), and out of range is 22003, as PostgreSQL.
// Pure, never throws, no allocation on the routing path.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/status.h"
#include "parser/analyze.h"
#include "router/bucket_hash.h"
#include "wire/bind_values.h"

namespace sw::router::detail {

// The type an item has before it meets the key.
enum class LiteralType : uint8_t {
  Unknown,  // a quoted string without a cast: read as the type it meets
  Int,      // int2/int4/int8: `integer`, of width `width`
  Numeric,  // `text` is a valid numeric
  Float4,   // `real` holds the float4 value
  Float8,   // `real`
  Other,    // any other type (text, uuid, ...): not handled here
};

struct Literal {
  LiteralType type = LiteralType::Other;
  KeyType width = KeyType::Int4;
  int64_t integer = 0;
  double real = 0;
  std::string_view text;
};

// What an item says about an integer key.
enum class IntKeyOutcome : uint8_t { Value, NoRow, Undecidable };
struct IntKey {
  IntKeyOutcome outcome = IntKeyOutcome::Value;
  int64_t value = 0;
};

// The type the items of one predicate meet the key in.
struct KeyComparison {
  LiteralType type = LiteralType::Int;  // Int, Numeric, Float4 or Float8
  KeyType width = KeyType::Int8;        // for Int: the widest of the key and the items
};

// A literal or a parameter's value as a Literal. `value` is the parsed item, `param` its Bind value
// (nullptr for a literal) and `param_oid` its Parse type (0: unspecified); `scratch` holds the text
// of a binary numeric parameter. An error is the cast's own (1.5e999::float8 -> 22003).
Result<Literal> read_literal(const parser::Value& value, const wire::BindParam* param, uint32_t param_oid,
                             std::string& scratch);

// The type a predicate's items meet an integer key of type `key` in: start with the key's own,
// widen by every item (an item of type Other counts as the key's).
inline KeyComparison key_comparison(KeyType key) { return {LiteralType::Int, key}; }
void widen(KeyComparison& comparison, const Literal& item);

// The key an item compared in `comparison` matches; errors are those of reading an Unknown item
// in the comparison's type (k = '1.0' -> 22P02).
Result<IntKey> compared_key(const Literal& item, const KeyComparison& comparison, KeyType key);

// The key an item assigned to a key of type `key` becomes (22003 out of range, 0A000 NaN or
// infinity of numeric).
Result<int64_t> assigned_key(const Literal& item, KeyType key);

}  // namespace sw::router::detail
