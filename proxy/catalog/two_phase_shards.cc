#include "catalog/two_phase_shards.h"

#include <cstdlib>
#include <string>

#include "catalog/pq.h"
#include "sqltext/catalog_sql.h"
#include "twopc/gid.h"

namespace sw::catalog {
namespace {

constexpr const char* kListPreparedSql =
    "SELECT gid, prepared::text, extract(epoch FROM now() - prepared)::float8 FROM pg_prepared_xacts "
    "WHERE database = current_database() AND starts_with(gid, $1) ORDER BY prepared, gid";

}  // namespace

Result<std::vector<twopc::PreparedXact>> list_prepared(PGconn* shard) {
  auto res = query(shard, kListPreparedSql, {std::string(twopc::kTwoPhaseGidPrefix)});
  if (!res) return res.status();
  std::vector<twopc::PreparedXact> out;
  const PGresult* r = res->get();
  out.reserve(static_cast<size_t>(PQntuples(r)));
  for (int row = 0; row < PQntuples(r); ++row) {
    out.push_back(
        {text_value(r, row, 0), text_value(r, row, 1), std::strtod(text_value(r, row, 2).c_str(), nullptr)});
  }
  return out;
}

Result<FinishOutcome> finish_prepared(PGconn* shard, std::string_view gid, twopc::TwoPhaseDecision decision) {
  const std::string sql = std::string(decision == twopc::TwoPhaseDecision::Commit ? "COMMIT" : "ROLLBACK") +
                          " PREPARED " + sqltext::quote_literal(std::string(gid));
  Status s = exec(shard, sql);
  if (s) return FinishOutcome::Finished;
  if (s.sqlstate == "42704") return FinishOutcome::Gone;
  return s;
}

}  // namespace sw::catalog
