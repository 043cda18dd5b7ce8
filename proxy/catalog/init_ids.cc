#include "catalog/init_ids.h"

#include "catalog/pq.h"
#include "catalog/shard_login.h"
#include "sqltext/id_ranges.h"

namespace sw::catalog {

Result<std::map<std::string, uint32_t>> assign_id_slots(PGconn* catalog,
                                                        const std::vector<std::string>& shard_names) {
  auto assigned = query(catalog, sqltext::kAssignIdSlotsSql, {text_array_literal(shard_names)});
  if (!assigned) return assigned.status();
  auto rows = query(catalog, sqltext::kLoadIdSlotsSql);
  if (!rows) return rows.status();
  std::map<std::string, uint32_t> slots;
  for (int row = 0; row < PQntuples(rows->get()); ++row) {
    int64_t slot = 0;
    parse_int64(rows->get(), row, 1, &slot);
    slots[text_value(rows->get(), row, 0)] = static_cast<uint32_t>(slot);
  }
  return slots;
}

Status record_id_slot(PGconn* shard, const std::string& name, uint32_t slot) {
  auto recorded = query(shard, sqltext::kRecordIdSlotSql, {name, std::to_string(slot)});
  if (!recorded) return recorded.status();
  const std::string holder = text_value(recorded->get(), 0, 0);
  int64_t held = -1;
  parse_int64(recorded->get(), 0, 1, &held);
  if (held == static_cast<int64_t>(slot)) return Status::ok();
  return Status::config("the database holds id slot " + std::to_string(held) + " (recorded for shard \"" +
                        holder + "\"), but the catalog gives shard " + name + " slot " +
                        std::to_string(slot) +
                        ": it was initialized as another shard or under another catalog, and its sequences "
                        "are numbered in that slot's range; point the config at the right database (or "
                        "give this shard back its former name)");
}

namespace {

// "<table>: sequence <name> <type> <first>..<last>: <action>"
std::string range_line(const std::string& table, const PGresult* res, int row) {
  std::string line = table;
  line += ": sequence ";
  line += text_value(res, row, 0);
  line += ' ';
  line += text_value(res, row, 1);
  line += ' ';
  line += text_value(res, row, 2);
  line += "..";
  line += text_value(res, row, 3);
  line += ": ";
  line += text_value(res, row, 4);
  return line;
}

// What to do about a smallint/integer sequence of a sharded table.
std::string narrow_sequence_warning(const std::string& table, const PGresult* res, int row) {
  const std::string sequence = text_value(res, row, 0);
  int64_t first = 0;
  int64_t last = 0;
  parse_int64(res, row, 2, &first);
  parse_int64(res, row, 3, &last);
  return "table " + table + ": sequence " + sequence + " is " + text_value(res, row, 1) +
         ", so this shard gets only " + std::to_string(last - first + 1) + " of its ids (" +
         std::to_string(first) + ".." + std::to_string(last) +
         ") and at most 127 shards can have a range of it; make the column and the sequence bigint (ALTER "
         "TABLE " +
         table + " ALTER COLUMN <column> TYPE bigint; ALTER SEQUENCE " + sequence +
         " AS bigint), then run shardwire init again";
}

}  // namespace

Result<TableRanges> assign_id_ranges(PGconn* shard, const std::string& table) {
  auto rows = query(shard, sqltext::kAssignIdRangesSql, {table});
  if (!rows) return rows.status();
  TableRanges out;
  const PGresult* res = rows->get();
  for (int row = 0; row < PQntuples(res); ++row) {
    out.lines.push_back(range_line(table, res, row));
    if (text_value(res, row, 1) != sqltext::sequence_type_name(sqltext::SequenceType::Int8))
      out.warnings.push_back(narrow_sequence_warning(table, res, row));
  }
  return out;
}

Result<std::string> prepared_transactions_warning(PGconn* shard, const std::string& shard_name) {
  auto setting = query(shard, "SELECT current_setting('max_prepared_transactions')");
  if (!setting) return setting.status();
  int64_t value = 0;
  parse_int64(setting->get(), 0, 0, &value);
  return prepared_transactions_advice(shard_name, value);
}

}  // namespace sw::catalog
