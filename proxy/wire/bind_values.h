// A Bind message's parameter values, decoded for the router (which routes on a shard key given as
// a parameter). The values are views: nothing is copied or interpreted here.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace sw::wire {

struct BindParam {
  bool null = false;
  bool binary = false;     // format code 1
  std::string_view bytes;  // the value; views the Bind message (valid while routing)
};

struct BindValues {
  std::vector<BindParam> params;  // $1 is params[0]
  // Parameter type OIDs from Parse ($1 is types[0]); missing or 0 = unspecified: the value is
  // then read as the type of an explicit cast in the SQL ($1::int4), else as the key's type.
  std::vector<uint32_t> types;
};

// Decodes a Bind body after the portal and statement names (BindMessage::rest): format codes
// (0, 1 or one per parameter) and values. Checks every length; 08P01 when malformed; 22023 for a
// parameter whose format code is neither 0 (text) nor 1 (binary), as PostgreSQL. The result
// format codes that follow are not read. Decodes into `values`, whose buffers are reused: no heap
// allocation once they have held as many parameters and types (a session decodes every Bind it
// routes into the same BindValues). On an error `values` is left partly filled.
Status decode_bind_values(std::string_view rest, const std::vector<uint32_t>& param_types,
                          BindValues* values);
// The same into new buffers.
Result<BindValues> decode_bind_values(std::string_view rest, const std::vector<uint32_t>& param_types);

}  // namespace sw::wire
