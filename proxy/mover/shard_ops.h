// The mover's SQL on shards and on the catalog, one function per operation, each idempotent so
// a step can be re-run after a crash. Blocking libpq; mover threads only.
#pragma once

#include <libpq-fe.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/config.h"
#include "mover/mover_types.h"

namespace sw::mover {

// ---- shards -------------------------------------------------------------------------------------
// What a shard needs before a move: every table exists, and has a primary key (or replica
// identity index) that includes the shard key, so the stream can apply updates and deletes by
// key. Config-fault errors that say what to do.
Status check_tables(PGconn* shard, const std::string& shard_name,
                    const std::vector<config::ShardedTable>& tables);
// CREATE PUBLICATION <name> FOR TABLE <tables> unless it exists.
Status ensure_publication(PGconn* shard, const std::string& name,
                          const std::vector<config::ShardedTable>& tables);
Status drop_publication(PGconn* shard, const std::string& name);
// Forgets a stream's applied position (shardwire.mover_progress) once the migration is over.
Status drop_progress(PGconn* shard, int64_t stream_id);
// Drops the slot if it exists, first ending the walsender that still holds it (a dead mover's).
Status drop_slot(PGconn* shard, const std::string& name);
bool slot_exists(PGconn* shard, const std::string& name);
// WAL the slot holds back on this shard, in bytes (0 when the slot does not exist).
Result<uint64_t> slot_retained_bytes(PGconn* shard, const std::string& name);

// Adds the buckets to shardwire.fenced_buckets (writes refused with SW001), holds_rows = true (the
// shard fenced at a cutover keeps the buckets' rows; a fence made again keeps them too), and
// returns the shard's clock right after the fence committed: transactions that started before it
// may not have seen the fence.
Result<std::string> fence(PGconn* shard, const BucketSet& buckets, uint64_t version);
// holds_rows = true on the buckets' fences here, committed before it returns: run before the
// mover writes the first row of a bucket the shard fences (the copy to the target), so no
// scatter read's snapshot sees such a row with its fence saying "no rows" (docs/architecture.md
// §5.6). Buckets not fenced here are left alone.
Status mark_holding_rows(PGconn* shard, const BucketSet& buckets);
// The shard's clock now (clock_timestamp() as text), for wait_for_drain.
Result<std::string> shard_clock(PGconn* shard);
Status unfence(PGconn* shard, const BucketSet& buckets);
// Waits until no client transaction (other than the mover's) that started before `since` is
// still open on the shard. False when `timeout` passed first.
Result<bool> wait_for_drain(PGconn* shard, const std::string& since, std::chrono::milliseconds timeout);
// cutover.drain_action = terminate: ends (pg_terminate_backend) the backends wait_for_drain waits
// for; their transactions roll back. Returns how many were signalled.
Result<int> terminate_drain_blockers(PGconn* shard, const std::string& since);
// Every transaction committed so far ends at or before this position, and WAL is flushed through
// it (so a logical walsender can send it at once).
Result<Lsn> current_wal_lsn(PGconn* shard);
// Deletes the buckets' rows in batches of `batch` rows, a group of buckets at a time
// (session_replication_role = replica, so the fence does not refuse it), pausing so that no more
// than rows_per_sec go per second. Once every batch has committed, the buckets' fences here say
// holds_rows = false. The caller guarantees that nothing writes the buckets' rows on this shard
// any more (it fences them, and no stream or copy of the mover feeds it).
// Returns the rows deleted.
Result<uint64_t> delete_bucket_rows(PGconn* shard, const std::vector<config::ShardedTable>& tables,
                                    const BucketSet& buckets, int64_t rows_per_sec, uint64_t batch = 1000);

// ---- catalog ------------------------------------------------------------------------------------
// Marks the buckets MIGRATING on `source` and returns the new directory version.
Result<uint64_t> publish_migrating(PGconn* catalog, const BucketSet& buckets, const std::string& source);
// Back to ACTIVE on `source` (a cutover that did not flip). Idempotent.
Status publish_active_on(PGconn* catalog, const BucketSet& buckets, const std::string& shard);
// How many routers that may still hold a valid read lease (heartbeat younger than `read_lease`)
// have not reported `version`: they may read the old owner until their read lease runs out.
Result<int> routers_behind(PGconn* catalog, uint64_t version, std::chrono::milliseconds read_lease);
// LISTEN for routers' acknowledgements (NOTIFY shardwire_routers, sent by the catalog when a
// router's reported version changes) on the connection wait_for_routers will use.
Status listen_for_acknowledgements(PGconn* catalog);
// Waits until every router with a heartbeat younger than `fresh` reports `version` or later,
// counting again on each acknowledgement's NOTIFY (and every 20 ms, for a catalog that sends
// none). False when `timeout` passed first. Routers silent for longer are not waited for (see
// ack_freshness in cutover.cc).
Result<bool> wait_for_routers(PGconn* catalog, uint64_t version, std::chrono::milliseconds fresh,
                              std::chrono::milliseconds timeout);
}  // namespace sw::mover
