#include "catalog/id_slots.h"

#include "catalog/pq.h"

namespace sw::catalog {

using catalog_rows::IdSlot;

Result<std::vector<IdSlot>> list_id_slots(const std::string& dsn) {
  auto conn = connect(dsn, "catalog");
  if (!conn) return conn.status();
  auto rows = query(conn->get(), sqltext::kLoadIdSlotsSql);
  if (!rows) return rows.status();
  std::vector<IdSlot> slots;
  const PGresult* res = rows->get();
  slots.reserve(static_cast<size_t>(PQntuples(res)));
  for (int row = 0; row < PQntuples(res); ++row) {
    IdSlot s;
    s.shard = text_value(res, row, 0);
    int64_t slot = 0;
    parse_int64(res, row, 1, &slot);
    s.slot = static_cast<uint32_t>(slot);
    s.assigned_at = text_value(res, row, 2);
    s.bigint_range = sqltext::id_range(s.slot, sqltext::SequenceType::Int8);
    s.integer_range = sqltext::id_range(s.slot, sqltext::SequenceType::Int4);
    slots.push_back(std::move(s));
  }
  return slots;
}

}  // namespace sw::catalog
