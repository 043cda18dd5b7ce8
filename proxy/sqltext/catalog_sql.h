// The SQL that `shardwire init` runs: the catalog schema (directory, routers, migrations) and the
// per-shard `shardwire` schema (bucket_of, fenced_buckets, install_fence). Pure string builders,
// no I/O. Every script is idempotent; callers run it inside a transaction holding
// kInitLockSql's advisory lock so concurrent inits serialize.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "config/config.h"

namespace sw::sqltext {

// NOTIFY channel; the payload is the new directory version in decimal.
inline constexpr const char* kNotifyChannel = "shardwire_directory";
// NOTIFY channel of routers' acknowledgements: sent when a router's row in shardwire.routers
// reports another directory version; the payload is that version.
inline constexpr const char* kRoutersChannel = "shardwire_routers";
// SQLSTATE raised by the fence trigger on a shard.
inline constexpr const char* kFenceSqlstate = "SW001";
// Name of the fence trigger on every sharded table.
inline constexpr const char* kFenceTriggerName = "shardwire_fence";

// Transaction-scoped advisory lock taken by every init step (catalog and shards).
inline constexpr const char* kInitLockSql = "SELECT pg_advisory_xact_lock(hashtext('shardwire init'))";

// Catalog database, schema `shardwire`:
//   directory_version(id, version, full_since)  one row; the version of the latest directory
//     change, and of the latest one an incremental load cannot follow (a deleted bucket row)
//   buckets(bucket, shard, state, version)
//   routers(id, directory_version, heartbeat_at, started_at, host, port, pid)
//   migrations(id, state, source, target, buckets, created_at, updated_at, error, steps jsonb)
//   transactions(gid, shards text[], decision 'commit'|'abort', decided_at)  two-phase commit
//     decisions, at most one per gid (catalog/two_phase.h)
// Contract: any INSERT/UPDATE of buckets rows sets their `version` to the transaction's new
// directory version; any INSERT/UPDATE/DELETE/TRUNCATE bumps directory_version exactly once per
// transaction and sends NOTIFY shardwire_directory '<version>' (delivered at commit); DELETE and
// TRUNCATE also set full_since to it. The bump locks the directory_version row, so versions are
// assigned in commit order: a snapshot that sees version V sees every change up to V, and the
// rows changed after version H are exactly those whose `version` is above H. A routers row whose
// directory_version changes sends NOTIFY shardwire_routers '<version>'. An existing catalog is
// upgraded in place (the script only adds).
std::string catalog_schema_sql();

// Per shard, schema `shardwire`: bucket_function_sql() (bucket_of), fenced_buckets(bucket,
// version, fenced_at, holds_rows), and install_fence(tbl regclass, key_column text, key_type
// text, buckets int) returning 'created' | 'updated' | 'unchanged'. install_fence generates a
// per-table trigger function shardwire."fence_<schema>_<table>"() with the key column, type and
// bucket count baked in, and a BEFORE INSERT OR UPDATE OR DELETE row trigger `shardwire_fence`
// calling it. The trigger raises SQLSTATE SW001 "bucket N is not owned by this shard; directory
// version V" (V is fenced_buckets.version; TABLE/SCHEMA error fields set) when the row's bucket
// -- for UPDATE the old row's and, when the key changed, the new row's -- is in fenced_buckets.
// Per row it costs one bucket_of call and one primary-key probe. Like every ordinary trigger it
// does not fire under session_replication_role = replica. fenced_buckets.holds_rows (default
// true) is false only while the bucket's rows are known to be absent from the shard: the scatter
// reads' owned-rows filter joins only the fences that say true (docs/architecture.md §5.6). A
// shard schema from an older version gets the column with true on every fence.
std::string shard_schema_sql();

// Parameterized statement ($1 table, $2 key column, $3 key type, $4 buckets) that installs the fence.
inline constexpr const char* kInstallFenceSql =
    "SELECT shardwire.install_fence($1::regclass, $2, $3, $4::int)";

// The same as one self-contained statement with quoted literals, for a caller that speaks the
// wire protocol itself (the proxy, after it created a configured sharded table).
std::string install_fence_statement(const config::ShardedTable& table, int buckets);
// A quoted SQL identifier: "tenant_id" (embedded quotes doubled).
std::string quote_identifier(const std::string& name);
// `shardwire.bucket_of("<key>"::<type>, <bucket_count>)` for a table's key, spelled one way
// everywhere (the bucket index below only serves queries that spell it the same); 22023 for a key
// type bucket_of has no overload for.
Result<std::string> bucket_expression(const config::ShardedTable& table, uint32_t bucket_count);
// CREATE INDEX IF NOT EXISTS on the table's bucket expression, as the mover's queries spell it:
// copies, verifications (inside the cutover's write pause) and cleanups then read the moved
// buckets' rows instead of whole tables. Run when shardwire creates the table (it is empty).
std::string bucket_index_statement(const config::ShardedTable& table, int buckets);

// Inserts the initial directory: $1 bucket count, $2 text[] of shard names; bucket i -> shard
// names[i mod N], state ACTIVE. Does nothing when buckets already has rows.
inline constexpr const char* kInitialDirectorySql =
    "INSERT INTO shardwire.buckets (bucket, shard, state) "
    "SELECT g, ($2::text[])[g % cardinality($2::text[]) + 1], 'ACTIVE' "
    "FROM generate_series(0, $1::int - 1) AS g "
    "WHERE NOT EXISTS (SELECT 1 FROM shardwire.buckets)";

// Fences $1 int[] buckets at directory version $2 (ON CONFLICT DO NOTHING), as holding no rows:
// init runs it in the transaction that creates the shard's fence table, and in that transaction
// mark_fences_holding_rows_sql() then marks the fences whose buckets do hold rows.
inline constexpr const char* kFenceBucketsSql =
    "INSERT INTO shardwire.fenced_buckets (bucket, version, holds_rows) "
    "SELECT unnest($1::int[]), $2::bigint, false ON CONFLICT (bucket) DO NOTHING";

// For one configured sharded table that exists on the shard: LOCK TABLE in SHARE mode, then
// holds_rows = true on every fence whose bucket has a row in the table. The lock, held to the
// end of the transaction, keeps writers out until the fences commit, so no row lands in a
// bucket after it was looked at. The bucket expression is spelled as the bucket index's
// (bucket_index_statement), which answers each fence's probe when the table has it; without it
// PostgreSQL scans the table once. 22023 for a key type bucket_of has no overload for.
Result<std::string> mark_fences_holding_rows_sql(const config::ShardedTable& table, uint32_t bucket_count);

// The whole directory in one statement (one snapshot): version, bucket, shard, state, bucket
// version. One row with NULL bucket columns when there are no buckets.
inline constexpr const char* kLoadDirectorySql =
    "SELECT v.version, b.bucket, b.shard, b.state, b.version "
    "FROM (SELECT version FROM shardwire.directory_version LIMIT 1) v LEFT JOIN shardwire.buckets b ON true "
    "ORDER BY b.bucket";

// The bucket rows changed after version $1, in one statement (one snapshot): version,
// full_since, bucket, shard, state, bucket version. One row with NULL bucket columns when none
// changed, and also when full_since is above $1 (then only a whole load is exact).
inline constexpr const char* kLoadDirectoryChangesSql =
    "SELECT v.version, v.full_since, b.bucket, b.shard, b.state, b.version "
    "FROM (SELECT version, full_since FROM shardwire.directory_version LIMIT 1) v "
    "LEFT JOIN shardwire.buckets b ON b.version > $1::bigint AND v.full_since <= $1::bigint "
    "ORDER BY b.bucket";

// A SQL string literal ('...' with quotes doubled; E'...' when it holds a backslash).
std::string quote_literal(const std::string& text);
// An int[] array literal: {1,2,3}.
std::string int_array_literal(const std::vector<int>& items);

}  // namespace sw::sqltext
