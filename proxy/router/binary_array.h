// A one-dimensional array parameter in PostgreSQL's binary format (array_send), as drivers that
// bind in binary send a key list (asyncpg's `key = ANY($1)`). Pure: decoding it into its elements'
// text, for routing each element like a '{...}' literal's, and encoding one shard's elements back
// (docs/architecture.md §6.3, "Key lists across shards").
//
// array_send: int32 dimensions (0 or 1 here), int32 has-nulls flag, uint32 element type OID, per
// dimension int32 length and int32 lower bound, then each element as int32 length (-1: NULL) and
// the element's own binary form. Element types a key can have: int2, int4, int8, text, varchar,
// bpchar, name, uuid.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sw::router {

struct BinaryArray {
  uint32_t element_type = 0;
  int32_t lower_bound = 1;
  std::vector<std::optional<std::string>> elements;  // each element's text; nullopt: NULL
};

// The array's elements as text (an int8 element 5 -> "5", a uuid -> its 8-4-4-4-12 form); nullopt
// for a malformed array, more than one dimension, or an element type that is not a key type.
std::optional<BinaryArray> decode_binary_array(std::string_view bytes);

// array_send of `elements` (text as decode_binary_array gives it) with the element type and lower
// bound of `like`; nullopt when an element's text is not a value of that type.
std::optional<std::string> encode_binary_array(const BinaryArray& like,
                                               const std::vector<std::optional<std::string>>& elements);

}  // namespace sw::router
