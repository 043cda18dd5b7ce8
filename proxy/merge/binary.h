// Binary (send) format of text-format result values, for a client that asks for binary result
// columns of a merged read (the shards answer the merge in text). Pure, never throws. Covered:
// bool, int2, int4, int8, oid, float4, float8, text, varchar, bpchar, name, bytea (hex output),
// uuid, date, time, timestamp, timestamptz (DateStyle ISO), interval (IntervalStyle postgres),
// numeric, and arrays of these; others (user types, ranges, json, ...) have no conversion here:
// has_binary_form() says so before any row is sent.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "merge/value.h"

namespace sw::merge {

bool has_binary_form(uint32_t type_oid);

// The value PostgreSQL's typsend would write for this text (22P02 when the text is not what the
// type prints).
Result<std::string> to_binary(uint32_t type_oid, std::string_view text, DateReading dates = {});

}  // namespace sw::merge
