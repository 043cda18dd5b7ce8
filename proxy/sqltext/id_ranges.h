// Globally unique ids for sharded tables (docs/architecture.md "Globally unique ids"): every shard
// holds an id slot, given once by `shardwire init` and never reused, and every sequence behind a
// sharded table's serial, identity or nextval() column on that shard is bounded to the slot's
// range for the sequence's type (MINVALUE/MAXVALUE/START). Ranges of different slots never
// overlap, and neither do the ranges of the three integer types, so a column widened from integer
// to bigint cannot step into a range another shard already used. Pure arithmetic and SQL text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sw::sqltext {

enum class SequenceType { Int2, Int4, Int8 };

struct IdRange {
  int64_t first = 0;  // the sequence's MINVALUE and START
  int64_t last = 0;   // its MAXVALUE
};

// How a type is split: slot k owns base + k*width + 1 .. base + (k+1)*width, where base is the
// largest value of the next smaller type; `slots` ranges fit below the type's maximum.
struct IdRangeLayout {
  int64_t base = 0;
  int64_t width = 0;
  uint32_t slots = 0;
};

// smallint: base 0, width 2^8, 127 slots; integer: base 32767, width 2^24, 127 slots;
// bigint: base 2^31-1, width 2^48 (about 2.8e14 ids per shard), 32767 slots.
IdRangeLayout id_range_layout(SequenceType type);

// The range `slot` owns for `type`; nullopt when the type has no range that far.
std::optional<IdRange> id_range(uint32_t slot, SequenceType type);

// PostgreSQL's format_type spelling ("smallint", "integer", "bigint") <-> SequenceType.
std::optional<SequenceType> sequence_type_named(std::string_view name);
const char* sequence_type_name(SequenceType type);

// Shard side, part of shard_schema_sql():
//   shardwire.id_slot(id, shard, slot)  one row: the slot `shardwire init` gave this shard
//   shardwire.id_range(slot integer, seq_type regtype) -> (first_value, last_value): the layout
//     above (NULLs when the type has no range for the slot)
//   shardwire.assign_id_ranges(tbl regclass) RETURNS TABLE(seq_name, seq_type, range_first,
//     range_last, action): bounds every sequence the table's columns use (owned by a serial or
//     identity column, or named by a nextval() default) to this shard's range. action is
//     'unchanged' (already bounded), 'restarted' (the sequence was below the range: it restarts at
//     its first value) or 'bounded' (already inside: it keeps its position). Errors: 55000 when
//     the shard has no slot (run shardwire init) or a sequence is already past the range's end,
//     22003 when the type has no range for the slot (make it bigint), 0A000 for a descending
//     sequence. install_fence calls it, so a table created through shardwire is bounded at once.
//   shardwire.id_ranges_after_alter() and, when the installing role is a superuser, the event
//     trigger shardwire_id_ranges (ddl_command_end, ALTER TABLE): a fenced table altered to draw
//     on a new sequence (ADD COLUMN ... serial, ADD GENERATED AS IDENTITY) is bounded at once.
std::string id_ranges_shard_sql();

// Catalog side, part of catalog_schema_sql(): shardwire.id_slots(shard PK, slot UNIQUE,
// assigned_at), the durable record of every shard's slot.
std::string id_slots_catalog_sql();

// $1 text[] of shard names in config order: gives each name without a slot the next unused one
// (max + 1, so a removed shard's slot is never handed out again: rows it numbered may live on).
inline constexpr const char* kAssignIdSlotsSql =
    "INSERT INTO shardwire.id_slots (shard, slot) "
    "SELECT n.name, (SELECT coalesce(max(s.slot) + 1, 0) FROM shardwire.id_slots s) + "
    "(row_number() OVER (ORDER BY n.ord))::int - 1 "
    "FROM unnest($1::text[]) WITH ORDINALITY AS n(name, ord) "
    "WHERE NOT EXISTS (SELECT 1 FROM shardwire.id_slots s WHERE s.shard = n.name) "
    "ON CONFLICT (shard) DO NOTHING";

// shard, slot, assigned_at of every slot, by slot.
inline constexpr const char* kLoadIdSlotsSql =
    "SELECT shard, slot, assigned_at FROM shardwire.id_slots ORDER BY slot";

// Shard side: records $1 shard name, $2 slot unless a slot is recorded; returns the recorded row.
inline constexpr const char* kRecordIdSlotSql =
    "WITH ins AS (INSERT INTO shardwire.id_slot (shard, slot) VALUES ($1, $2::int) "
    "ON CONFLICT (id) DO NOTHING RETURNING shard, slot) "
    "SELECT shard, slot FROM ins UNION ALL SELECT shard, slot FROM shardwire.id_slot";

// $1 table: one row per sequence (seq_name, seq_type, range_first, range_last, action).
inline constexpr const char* kAssignIdRangesSql = "SELECT * FROM shardwire.assign_id_ranges($1::regclass)";

}  // namespace sw::sqltext
