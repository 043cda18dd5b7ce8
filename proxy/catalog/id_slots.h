// Id slots (docs/architecture.md "Globally unique ids"): the slot `shardwire init` gave each
// shard, as recorded in the catalog's shardwire.id_slots, with the ranges a slot's sequences get.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "sqltext/id_ranges.h"

namespace sw::catalog {

struct IdSlot {
  std::string shard;
  uint32_t slot = 0;
  std::string assigned_at;  // timestamptz text
  std::optional<sqltext::IdRange> bigint_range, integer_range;
};

// Blocking: connects to the catalog `dsn`, reads every slot (by slot), disconnects.
Result<std::vector<IdSlot>> list_id_slots(const std::string& dsn);

}  // namespace sw::catalog
