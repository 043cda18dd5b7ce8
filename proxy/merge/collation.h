// Whether the merge may compare a read's text (docs/architecture.md §5.6). The merge compares
// text by bytes: ordering (ORDER BY keys, min/max, HAVING's < <= > >=) is right only under a
// collation that orders by bytes (C, POSIX, C.UTF-8, ucs_basic, or default when the database's
// is one of these); equality (GROUP BY keys, DISTINCT, HAVING's = <>) also under any
// deterministic collation, where equal text is equal bytes. Each compared column's collation
// comes from a COLLATE on it, else from the shard column it is (RowDescription's table and
// attribute), else from what its expression reads; when none of these tells, the merge refuses.
// Pure, never throws.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "merge/plan.h"

namespace sw::merge {

enum class TextCompare : uint8_t { None, Equal, Order };

// Per shard column: how the merge compares its text (None for columns of other types).
std::vector<TextCompare> compared_text_columns(const MergePlan& plan,
                                               const std::vector<uint32_t>& shard_types);

// A shard's RowDescription field origin: the table OID and attribute number (0 when the column
// is not a plain column of a table or view).
struct ColumnOrigin {
  uint32_t table = 0;
  int attnum = 0;
};

// What a shard said about collations: its database's, the columns of the read's tables with
// theirs, and the names of its nondeterministic collations.
struct ShardCollations {
  struct Column {
    uint32_t table = 0;
    int attnum = 0;
    std::string collation;  // "" for a type without one
    std::string relation;   // as regclass prints it
    std::string name;
  };
  std::string database;
  std::vector<Column> columns;
  std::vector<std::string> nondeterministic;
};

// The SQL of one row answering ShardCollations for `tables` (regclass texts).
std::string shard_collations_query(const std::vector<std::string>& tables);
// That row's three values read back; nullopt when malformed.
std::optional<ShardCollations> parse_shard_collations(const std::optional<std::string>& database,
                                                      const std::optional<std::string>& columns,
                                                      const std::optional<std::string>& nondeterministic);

// The shards' columns as the first RowDescription gave them: names, and origins as OIDs of the
// shard that sent it (`described_by`'s; each shard database numbers its tables itself).
struct ShardColumns {
  std::vector<std::string> names;
  std::vector<ColumnOrigin> origins;
  const ShardCollations* described_by = nullptr;
};

// 0A000 naming the first compared column whose collation on `shard` the merge cannot follow (or
// cannot tell), and the collation. The plan's first `hidden` columns are sort keys the client
// did not select.
Status check_text_collations(const std::vector<TextCompare>& compared, const MergePlan& plan,
                             const ShardColumns& columns, const ShardCollations& shard);

}  // namespace sw::merge
