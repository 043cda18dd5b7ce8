// Id slots (docs/architecture.md "Globally unique ids"): reads back the slot `shardwire init` gave
// each shard (shardwire.id_slots), with its ranges; the row is catalog_rows/id_slot.h.
#pragma once

#include <string>
#include <vector>

#include "catalog_rows/id_slot.h"
#include "common/status.h"

namespace sw::catalog {

// Blocking: connects to the catalog `dsn`, reads every slot (by slot), disconnects.
Result<std::vector<catalog_rows::IdSlot>> list_id_slots(const std::string& dsn);

}  // namespace sw::catalog
