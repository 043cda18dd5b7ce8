// The per-shard id ranges: every slot's range lies inside its type, ranges of neighbouring slots
// touch without overlapping, the three types' ranges never overlap each other, and the SQL the
// shards run carries the same layout. (That PostgreSQL applies it is checked in
// tests/integration/ids_test.cc.)
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "sqltext/catalog_sql.h"
#include "sqltext/id_ranges.h"

using namespace sw::sqltext;

namespace {
bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }
constexpr SequenceType kTypes[] = {SequenceType::Int2, SequenceType::Int4, SequenceType::Int8};
int64_t type_max(SequenceType t) {
  switch (t) {
    case SequenceType::Int2: return INT16_MAX;
    case SequenceType::Int4: return INT32_MAX;
    case SequenceType::Int8: break;
  }
  return INT64_MAX;
}
}  // namespace

TEST_CASE("slot 0 and the layout of each type") {
  CHECK(id_range(0, SequenceType::Int8)->first == int64_t{INT32_MAX} + 1);
  CHECK(id_range(0, SequenceType::Int8)->last == int64_t{INT32_MAX} + (int64_t{1} << 48));
  CHECK(id_range(1, SequenceType::Int8)->first == int64_t{INT32_MAX} + (int64_t{1} << 48) + 1);
  CHECK(id_range(0, SequenceType::Int4)->first == 32768);
  CHECK(id_range(0, SequenceType::Int4)->last == 32767 + (1 << 24));
  CHECK(id_range(0, SequenceType::Int2)->first == 1);
  CHECK(id_range(0, SequenceType::Int2)->last == 256);
  CHECK(id_range_layout(SequenceType::Int8).slots == 32767);
  CHECK(id_range_layout(SequenceType::Int4).slots == 127);
  CHECK(id_range_layout(SequenceType::Int2).slots == 127);
}

TEST_CASE("every slot's range fits its type and touches the next one without overlap") {
  for (SequenceType t : kTypes) {
    const IdRangeLayout layout = id_range_layout(t);
    CAPTURE(sequence_type_name(t));
    for (uint32_t slot = 0; slot < layout.slots; ++slot) {
      auto range = id_range(slot, t);
      REQUIRE(range.has_value());
      CHECK(range->first >= 1);
      CHECK(range->first <= range->last);
      CHECK(range->last <= type_max(t));
      CHECK(range->last - range->first + 1 == layout.width);
      if (slot + 1 < layout.slots) CHECK(id_range(slot + 1, t)->first == range->last + 1);
    }
    // The first slot past the layout has no range (its end would overflow the type).
    CHECK_FALSE(id_range(layout.slots, t).has_value());
    CHECK_FALSE(id_range(UINT32_MAX, t).has_value());
  }
}

TEST_CASE("the types' ranges never overlap: a column widened to a larger type leaves the old ranges behind") {
  // The last smallint range ends below the first integer range, which ends below... and so on.
  auto last_of = [](SequenceType t) { return id_range(id_range_layout(t).slots - 1, t)->last; };
  CHECK(last_of(SequenceType::Int2) < id_range(0, SequenceType::Int4)->first);
  CHECK(last_of(SequenceType::Int4) < id_range(0, SequenceType::Int8)->first);
  CHECK(last_of(SequenceType::Int8) <= INT64_MAX);
}

TEST_CASE("type names are PostgreSQL's format_type spelling") {
  for (SequenceType t : kTypes) CHECK(sequence_type_named(sequence_type_name(t)) == t);
  CHECK_FALSE(sequence_type_named("int8").has_value());
  CHECK_FALSE(sequence_type_named("numeric").has_value());
}

TEST_CASE("the shard's SQL carries the same layout, and install_fence bounds the table's sequences") {
  const std::string sql = id_ranges_shard_sql();
  CHECK(has(sql, "CREATE TABLE IF NOT EXISTS shardwire.id_slot ("));
  CHECK(has(sql, "CREATE OR REPLACE FUNCTION shardwire.id_range(slot integer, seq_type regtype"));
  CHECK(has(sql, "CREATE OR REPLACE FUNCTION shardwire.assign_id_ranges(tbl regclass)"));
  CHECK(has(sql, "('smallint'::regtype, 0::bigint, 256::bigint, 127)"));
  CHECK(has(sql, "('integer'::regtype, 32767::bigint, 16777216::bigint, 127)"));
  CHECK(has(sql, "('bigint'::regtype, 2147483647::bigint, 281474976710656::bigint, 32767)"));
  CHECK(has(sql, "ERRCODE = '22003'"));
  CHECK(has(sql, "ERRCODE = '0A000'"));
  CHECK(has(sql, "CREATE EVENT TRIGGER shardwire_id_ranges ON ddl_command_end WHEN TAG IN ('ALTER TABLE')"));
  CHECK(has(sql, "g.tgname = 'shardwire_fence'"));  // only fenced (sharded) tables
  CHECK(has(shard_schema_sql(), sql));
  CHECK(has(shard_schema_sql(), "PERFORM 1 FROM shardwire.assign_id_ranges(tbl);"));
  CHECK(has(shard_schema_sql(), "IF EXISTS (SELECT 1 FROM shardwire.id_slot) THEN"));
  CHECK(has(catalog_schema_sql(), id_slots_catalog_sql()));
  CHECK(has(id_slots_catalog_sql(), "slot integer NOT NULL UNIQUE"));
  // A slot is never handed out twice: the next one is max + 1, not the smallest free one.
  CHECK(has(kAssignIdSlotsSql, "coalesce(max(s.slot) + 1, 0)"));
}
