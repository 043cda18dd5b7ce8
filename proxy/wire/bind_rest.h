// A Bind message's fields after the statement name (BindMessage::rest): the parameter format
// codes, the parameter values and the result format codes, taken apart and put back together for
// the proxy's rewritten Binds (a split statement's part, a key list cut to one shard's items, a
// Bind the proxy injects). docs/architecture.md §4.1.
//
// Decoding: every count and length is checked, as decode_bind checks them (which uses the same
// walk): 0, 1 or one-per-value parameter format codes, value lengths of -1 (NULL) or 0..INT32_MAX
// inside the bytes, no bytes after the result format codes. Malformed is 08P01, the client's
// fault. Format codes are not interpreted (decode_bind_values refuses codes other than 0 and 1).
// Views point into the rest passed in.
// Encoding: appends the fields; a count past 65535, a value past INT32_MAX bytes or fields past
// MessageWriter's 1 GiB append nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace sw::wire {

struct BindRest {
  std::vector<uint16_t> param_formats;                  // none (all text), one for all, or one per value
  std::vector<std::optional<std::string_view>> values;  // $1 is values[0]; nullopt is NULL
  std::vector<uint16_t> result_formats;                 // none (all text), one for all, or one per column
  std::string_view parameters;                          // the parameter format codes and values, as sent
};

Result<BindRest> decode_bind_rest(std::string_view rest);
void encode_bind_rest(std::string& out, const BindRest& bind);

// The parameter part alone (format codes and values, no result format codes after them: a
// BindRest::parameters): result_formats comes back empty, and encode_bind_parameters writes
// no result format codes.
Result<BindRest> decode_bind_parameters(std::string_view parameters);
void encode_bind_parameters(std::string& out, const BindRest& bind);

// Whether decode_bind_rest would accept `rest`; when not, the reason in `*why`. Builds nothing on
// success: decode_bind runs it on every Bind.
bool bind_rest_is_well_formed(std::string_view rest, std::string* why);

}  // namespace sw::wire
