// Arrays in binary (send) format, from array_out's text, for merge/binary.h. Pure, never throws.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace sw::merge {

// The element type of an array type whose elements have a binary form here; 0 for any other.
uint32_t array_element_type(uint32_t array_oid);

// array_out's text ("{1,NULL}", "{{\"a b\",c},{d,e}}", "[0:1]={x,y}", "{}") as array_send
// writes it: ndim, has-nulls flag, element type, (length, lower bound) per dimension, then each
// element as a length (-1 for NULL) and its bytes. 22P02 when the text is not an array of that
// element type as array_out prints it.
// The elements of array_out's text in row-major order (nullopt for NULL); 22P02 when the text is
// not an array as array_out prints it.
Result<std::vector<std::optional<std::string>>> array_elements(std::string_view text);

Result<std::string> array_to_binary(uint32_t element_oid, std::string_view text);

}  // namespace sw::merge
