// The id-range steps of `shardwire init` (docs/architecture.md "Globally unique ids") and its check
// of max_prepared_transactions. Blocking libpq, inside init's locked transactions.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace sw::catalog {

// Catalog: gives every name in `shard_names` (config order) that has no slot the next unused one,
// then returns every recorded slot by shard name.
Result<std::map<std::string, uint32_t>> assign_id_slots(PGconn* catalog,
                                                        const std::vector<std::string>& shard_names);

// Shard: records `slot` for shard `name` on its first init; a shard that already holds another
// slot is refused (Fault::Config: the database was initialized as another shard or under
// another catalog, and its sequences are numbered in that slot's range).
Status record_id_slot(PGconn* shard, const std::string& name, uint32_t slot);

// Shard: bounds the sequences of `table` to the shard's range. One line per sequence
// ("orders_id_seq bigint 2147483648..2147483648: restarted") and, for smallint and integer
// sequences, a warning that says what to do.
struct TableRanges {
  std::vector<std::string> lines;
  std::vector<std::string> warnings;
};
Result<TableRanges> assign_id_ranges(PGconn* shard, const std::string& table);

// Shard: prepared_transactions_advice (catalog/shard_login.h) for its max_prepared_transactions.
Result<std::string> prepared_transactions_warning(PGconn* shard, const std::string& shard_name);

}  // namespace sw::catalog
