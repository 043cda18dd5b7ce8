#include "sqltext/id_ranges.h"

namespace sw::sqltext {
namespace {

constexpr int64_t kInt2Max = 32767;
constexpr int64_t kInt4Max = 2147483647;
constexpr int64_t kInt8Max = INT64_MAX;

constexpr IdRangeLayout layout_for(int64_t base, int64_t width, int64_t type_max) {
  return IdRangeLayout{base, width, static_cast<uint32_t>((type_max - base) / width)};
}

constexpr IdRangeLayout kInt2Layout = layout_for(0, int64_t{1} << 8, kInt2Max);
constexpr IdRangeLayout kInt4Layout = layout_for(kInt2Max, int64_t{1} << 24, kInt4Max);
constexpr IdRangeLayout kInt8Layout = layout_for(kInt4Max, int64_t{1} << 48, kInt8Max);

// The shard side's shardwire.id_range, with the layouts above baked in.
std::string id_range_function_sql() {
  std::string rows;
  for (SequenceType t : {SequenceType::Int2, SequenceType::Int4, SequenceType::Int8}) {
    const IdRangeLayout l = id_range_layout(t);
    if (!rows.empty()) rows += ", ";
    rows += "('" + std::string(sequence_type_name(t)) + "'::regtype, " + std::to_string(l.base) +
            "::bigint, " + std::to_string(l.width) + "::bigint, " + std::to_string(l.slots) + ")";
  }
  return "CREATE OR REPLACE FUNCTION shardwire.id_range(slot integer, seq_type regtype, "
         "OUT first_value bigint, OUT last_value bigint)\n"
         "LANGUAGE sql IMMUTABLE AS $fn$\n"
         "  SELECT r.base + slot::bigint * r.width + 1, r.base + (slot::bigint + 1) * r.width\n"
         "  FROM (VALUES " +
         rows +
         ") AS r(t, base, width, slots)\n"
         "  WHERE r.t = seq_type AND slot >= 0 AND slot < r.slots\n"
         "$fn$;\n";
}

const char* const kIdSlotTable = R"SQL(
CREATE TABLE IF NOT EXISTS shardwire.id_slot (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  shard text NOT NULL,
  slot integer NOT NULL CHECK (slot >= 0)
);
)SQL";

// Sequences a table's columns draw from: owned by a serial ('a') or identity ('i') column, or
// named by a column default (nextval('s') records a normal dependency of the default on s).
const char* const kAssignIdRanges = R"SQL(
CREATE OR REPLACE FUNCTION shardwire.assign_id_ranges(tbl regclass)
RETURNS TABLE (seq_name text, seq_type text, range_first bigint, range_last bigint, action text)
LANGUAGE plpgsql AS $fn$
DECLARE
  my_slot integer;
  s record;
  lo bigint;
  hi bigint;
  current_value bigint;
BEGIN
  SELECT i.slot INTO my_slot FROM shardwire.id_slot i;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'shardwire.assign_id_ranges: this shard has no id slot, so the sequences of % cannot be given a range', tbl
      USING ERRCODE = '55000', HINT = 'run shardwire init with this shard in the config';
  END IF;
  FOR s IN
    SELECT q.seqrelid, q.seqtypid, q.seqincrement, q.seqmin, q.seqmax FROM pg_sequence q
    WHERE q.seqrelid IN (
      SELECT d.objid FROM pg_depend d
      WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
        AND d.refobjid = tbl AND d.deptype IN ('a', 'i')
      UNION
      SELECT d.refobjid FROM pg_attrdef ad
      JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid
        AND d.refclassid = 'pg_class'::regclass
      WHERE ad.adrelid = tbl)
    ORDER BY q.seqrelid
  LOOP
    seq_name := s.seqrelid::regclass::text;
    seq_type := format_type(s.seqtypid, NULL);
    SELECT r.first_value, r.last_value INTO lo, hi FROM shardwire.id_range(my_slot, s.seqtypid::regtype) r;
    IF lo IS NULL THEN
      RAISE EXCEPTION 'sequence % of % is %, which has no id range for this shard''s slot %', seq_name, tbl, seq_type, my_slot
        USING ERRCODE = '22003',
              HINT = format('make the column and the sequence bigint (ALTER TABLE %s ALTER COLUMN ... TYPE bigint; ALTER SEQUENCE %s AS bigint), then run shardwire init', tbl, seq_name);
    END IF;
    IF s.seqincrement < 0 THEN
      RAISE EXCEPTION 'sequence % of % descends; shardwire bounds only ascending sequences to a per-shard range', seq_name, tbl
        USING ERRCODE = '0A000', HINT = format('ALTER SEQUENCE %s INCREMENT BY 1, then run shardwire init', seq_name);
    END IF;
    range_first := lo;
    range_last := hi;
    IF s.seqmin = lo AND s.seqmax = hi THEN
      action := 'unchanged';
    ELSE
      EXECUTE format('SELECT last_value FROM %s', s.seqrelid::regclass) INTO current_value;
      IF current_value > hi THEN
        RAISE EXCEPTION 'sequence % of % is at %, past the end (%) of this shard''s id range % .. %', seq_name, tbl, current_value, hi, lo, hi
          USING ERRCODE = '55000', HINT = 'its values may already overlap another shard''s; renumber the table or give the sequence its range by hand';
      END IF;
      IF current_value < lo THEN
        EXECUTE format('ALTER SEQUENCE %s MINVALUE %s MAXVALUE %s START WITH %s RESTART WITH %s', s.seqrelid::regclass, lo, hi, lo, lo);
        action := 'restarted';
      ELSE
        EXECUTE format('ALTER SEQUENCE %s MINVALUE %s MAXVALUE %s START WITH %s', s.seqrelid::regclass, lo, hi, lo);
        action := 'bounded';
      END IF;
    END IF;
    RETURN NEXT;
  END LOOP;
END
$fn$;
)SQL";

// ALTER TABLE that adds a serial or identity column to a fenced (sharded) table, or points a
// default at another sequence, bounds the new sequences at once. Event triggers need a superuser
// to create; without one the trigger is left out and the next shardwire init does the bounding.
const char* const kIdRangesEventTrigger = R"SQL(
CREATE OR REPLACE FUNCTION shardwire.id_ranges_after_alter() RETURNS event_trigger
LANGUAGE plpgsql AS $fn$
DECLARE
  t oid;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM shardwire.id_slot) THEN
    RETURN;
  END IF;
  FOR t IN
    SELECT DISTINCT c.objid FROM pg_event_trigger_ddl_commands() c
    WHERE c.classid = 'pg_class'::regclass AND c.object_type = 'table'
      AND EXISTS (SELECT 1 FROM pg_trigger g WHERE g.tgrelid = c.objid AND g.tgname = 'shardwire_fence')
  LOOP
    PERFORM 1 FROM shardwire.assign_id_ranges(t::regclass);
  END LOOP;
END
$fn$;
DO $do$
BEGIN
  IF (SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = current_user)
     AND NOT EXISTS (SELECT 1 FROM pg_event_trigger e WHERE e.evtname = 'shardwire_id_ranges') THEN
    CREATE EVENT TRIGGER shardwire_id_ranges ON ddl_command_end WHEN TAG IN ('ALTER TABLE')
      EXECUTE FUNCTION shardwire.id_ranges_after_alter();
  END IF;
END
$do$;
)SQL";

const char* const kIdSlotsCatalog = R"SQL(
CREATE TABLE IF NOT EXISTS shardwire.id_slots (
  shard text PRIMARY KEY,
  slot integer NOT NULL UNIQUE CHECK (slot >= 0),
  assigned_at timestamptz NOT NULL DEFAULT now()
);
)SQL";

}  // namespace

IdRangeLayout id_range_layout(SequenceType type) {
  switch (type) {
    case SequenceType::Int2: return kInt2Layout;
    case SequenceType::Int4: return kInt4Layout;
    case SequenceType::Int8: break;
  }
  return kInt8Layout;
}

std::optional<IdRange> id_range(uint32_t slot, SequenceType type) {
  const IdRangeLayout l = id_range_layout(type);
  if (slot >= l.slots) return std::nullopt;
  const int64_t start = l.base + static_cast<int64_t>(slot) * l.width;
  return IdRange{start + 1, start + l.width};
}

std::optional<SequenceType> sequence_type_named(std::string_view name) {
  if (name == "smallint") return SequenceType::Int2;
  if (name == "integer") return SequenceType::Int4;
  if (name == "bigint") return SequenceType::Int8;
  return std::nullopt;
}

const char* sequence_type_name(SequenceType type) {
  switch (type) {
    case SequenceType::Int2: return "smallint";
    case SequenceType::Int4: return "integer";
    case SequenceType::Int8: break;
  }
  return "bigint";
}

std::string id_ranges_shard_sql() {
  return kIdSlotTable + id_range_function_sql() + kAssignIdRanges + kIdRangesEventTrigger;
}

std::string id_slots_catalog_sql() { return kIdSlotsCatalog; }

}  // namespace sw::sqltext
