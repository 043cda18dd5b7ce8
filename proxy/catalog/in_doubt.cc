#include "catalog/in_doubt.h"

#include "catalog/pq.h"
#include "catalog/two_phase.h"
#include "catalog/two_phase_shards.h"
#include "twopc/gid.h"

namespace sw::catalog {

Result<std::vector<twopc::InDoubtTransaction>> list_in_doubt(const config::Config& config) {
  auto catalog = connect(config.catalog.dsn, "catalog");
  if (!catalog) return catalog.status();
  auto decisions = load_decisions(catalog->get());
  if (!decisions) return decisions.status();
  std::vector<twopc::InDoubtTransaction> rows;
  for (const config::Shard& shard : config.shards) {
    auto conn = connect(shard.dsn, "shard " + shard.name);
    if (!conn) return conn.status();
    auto prepared = list_prepared(conn->get());
    if (!prepared) {
      const Status& s = prepared.status();
      return Status{s.fault, s.sqlstate, "shard " + shard.name + ": " + s.message};
    }
    for (twopc::PreparedXact& x : *prepared) {
      auto d = decisions->find(twopc::transaction_gid(x.gid));
      std::string decision = d == decisions->end() ? "none" : twopc::decision_name(d->second.decision);
      std::string owner = twopc::gid_instance(x.gid);
      rows.push_back({std::move(x.gid), shard.name, std::move(x.prepared_at), x.age_s, std::move(decision),
                      std::move(owner)});
    }
  }
  return rows;
}

}  // namespace sw::catalog
