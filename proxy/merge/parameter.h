// The client's Bind parameters as the merge needs them: HAVING compares output columns with
// parameters (docs/architecture.md §6.3), so the proxy reads their values itself, in text or in
// binary (PostgreSQL's send format of the parameter's type). Pure, never throws, never logs
// values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace sw::merge {

struct BindParameter {
  int format = 0;                    // 0 text, 1 binary
  std::optional<std::string> value;  // nullopt: NULL
  uint32_t type = 0;                 // the Parse's type OID; 0: unspecified (PostgreSQL infers it)
};

// A Bind's parameter part (format codes: none, one for all or one each; then the values) with
// the Parse's parameter types; nullopt when malformed.
std::optional<std::vector<BindParameter>> decode_bind_parameters(std::string_view blob,
                                                                 const std::vector<uint32_t>& types);

// A binary value of `type_oid` as PostgreSQL's text output prints it: int2/4/8, oid, float4/8,
// bool, numeric, text types. 22P03 when malformed, 0A000 for another type.
Result<std::string> binary_to_text(uint32_t type_oid, std::string_view bytes);

// The value of a LIMIT (`limit`) or OFFSET parameter $`number` (PostgreSQL types it bigint): -1
// for a NULL LIMIT (no limit), 0 for a NULL OFFSET; 2201W / 2201X when negative, as PostgreSQL.
Result<int64_t> count_parameter(const std::vector<BindParameter>& parameters, int number, bool limit);

}  // namespace sw::merge
