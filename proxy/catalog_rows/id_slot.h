// An id slot (docs/architecture.md "Globally unique ids"): the slot `shardwire init` gave a shard,
// as recorded in the catalog's shardwire.id_slots, with the ranges the slot's sequences get. Plain
// data, what SHOW SEQUENCES lists; catalog/id_slots.h reads the rows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sqltext/id_ranges.h"

namespace sw::catalog_rows {

struct IdSlot {
  std::string shard;
  uint32_t slot = 0;
  std::string assigned_at;  // timestamptz text
  std::optional<sqltext::IdRange> bigint_range, integer_range;
};

}  // namespace sw::catalog_rows
