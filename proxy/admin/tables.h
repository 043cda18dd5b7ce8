// Every table the console shows, each declared once (its columns live next to its builder).
// pgbouncer's tables keep pgbouncer 1.18's column names and order so pgbouncer_exporter and
// existing scripts read them; shardwire's extra columns come last. pgbouncer's "database" is a
// shard here: each shard is a pool target, as each [databases] entry is in pgbouncer.
#pragma once

#include <string_view>
#include <vector>

#include "admin/console.h"
#include "admin/result_table.h"
#include "config/config.h"
#include "router/router.h"
#include "stats/snapshot.h"

namespace sw::admin {

// pgbouncer's (tables_pgbouncer.cc)
ResultTable help_table();
ResultTable version_table();
ResultTable config_table(const config::Config& config);
ResultTable databases_table(const config::Config& config, const stats::Snapshot& snapshot, bool paused);
ResultTable pools_table(const config::Config& config, const stats::Snapshot& snapshot);
ResultTable clients_table(const stats::Snapshot& snapshot);
ResultTable servers_table(const stats::Snapshot& snapshot);
// Averages are over the proxy's lifetime (`uptime_seconds`): per second for counts and bytes,
// per transaction/query for times.
ResultTable stats_table(const stats::Snapshot& snapshot, double uptime_seconds);
ResultTable stats_totals_table(const stats::Snapshot& snapshot);
ResultTable lists_table(const config::Config& config, const stats::Snapshot& snapshot);
ResultTable users_table(const config::Config& config);
ResultTable state_table(const ProxyState& state);

// shardwire's (tables_sharding.cc)
// `superuser`: shard name -> "yes" | "no" (a shard not in it shows NULL: not known).
ResultTable shards_table(const config::Config& config, const router::Directory* directory,
                         const std::map<std::string, std::string>& superuser = {});
// Error (42704) when `shard` names no shard.
Result<ResultTable> buckets_table(const router::Directory& directory, std::string_view shard);
ResultTable directory_table(const DirectoryStatus& status);
ResultTable routers_table(const std::vector<catalog::RegisteredRouter>& routers);
// SHOW SEQUENCES: shard, slot, bigint_first, bigint_last, integer_first, integer_last, assigned_at
// (integer_* NULL for a slot past the integer ranges).
ResultTable id_slots_table(const std::vector<catalog::IdSlot>& slots);
// SHOW TRANSACTIONS: gid, shard, prepared, age_s, decision (commit | abort | none), owner.
ResultTable transactions_table(const std::vector<twopc::InDoubtTransaction>& rows);
ResultTable route_table(const router::Route& route, const router::Directory& directory);

// the mover's (tables_mover.cc)
// `max_concurrent`: this instance's mover.max_concurrent, for the `waiting` column.
ResultTable migrations_table(const std::vector<catalog::Migration>& migrations, int max_concurrent);
// SHOW REBALANCE: one row, the progress of the rebalance under way (catalog/migration_progress.h).
ResultTable rebalance_progress_table(const std::vector<catalog::Migration>& migrations);
// Why a planned migration has not started yet, as this instance counts the mover's slots; ""
// for one that is not planned.
std::string waiting_reason(const catalog::Migration& m, const std::vector<catalog::Migration>& all,
                           int max_concurrent);
ResultTable rebalance_table(const std::vector<PlannedMigration>& plan);
ResultTable verify_table(uint32_t bucket, const std::vector<BucketCheck>& checks);
// VERIFY REFERENCE: shard, rows, checksum (both NULL where the table is missing), matches.
ResultTable verify_reference_table(const std::vector<ReferenceCheck>& checks);
// "1-5,9,12-13"
std::string bucket_ranges(const std::vector<uint32_t>& buckets);

}  // namespace sw::admin
