// The mover's bulk copy (docs/architecture.md §8.3): the rows of a bucket set, read from the source in
// the snapshot the replication slot exported, streamed into the target with COPY. Also the SQL
// pieces the verifier shares (how a table and its bucket are spelled in SQL) and the sequence
// fix-up the target needs before it takes writes. Blocking libpq; runs on a mover thread.
#pragma once

#include <libpq-fe.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "catalog/pq.h"
#include "common/status.h"
#include "config/config.h"
#include "mover/mover_types.h"
#include "sqltext/catalog_sql.h"

namespace sw::mover {

struct CopyProgress {
  uint64_t rows = 0;   // rows streamed into the target so far (all tables)
  uint64_t bytes = 0;  // COPY data bytes streamed so far
};

// Binary (the default) is exact for every type and a little faster: 200 000 `orders` rows, one
// PostgreSQL 15, about 400k rows/s binary vs 330k rows/s text. It needs the same column types on
// both sides, which holds because DDL goes through the proxy to every shard. Text is the fallback
// for a target whose column types drifted (text input parses what text output printed).
enum class CopyFormat { Binary, Text };

struct CopyOptions {
  std::string source_dsn, target_dsn;
  // Names for error messages ("copy of orders from s0: ..."); never the DSNs.
  std::string source_name = "source", target_name = "target";
  // Exported by CREATE_REPLICATION_SLOT ... EXPORT_SNAPSHOT and kept alive by the caller until
  // copy_buckets returns. Empty: the copy takes a fresh REPEATABLE READ snapshot of its own
  // (consistent, but not aligned with any slot; for tests and tools only).
  std::string snapshot_name;
  std::vector<config::ShardedTable> tables;
  BucketSet buckets;         // bucket_count() is the directory's bucket count
  int64_t rows_per_sec = 0;  // mover.copy_rows_per_sec, over all streams together; 0 = unthrottled
  // mover.copy_streams: connection pairs copying at once, each a share of the buckets
  // (split_for_streams). Every stream imports the same snapshot; without one (snapshot_name
  // empty) each takes its own.
  int streams = 1;
  CopyFormat format = CopyFormat::Binary;
  // Called at least every ~0.5 s while rows flow, and once at the end; by one stream's thread at a
  // time (never concurrently), not necessarily the caller's.
  std::function<void(const CopyProgress&)> on_progress;
  // Set -> the copy stops within ~0.1 s (unless blocked writing to a stalled target), rolls back
  // the table in progress (tables already committed stay; a re-run redoes them) and returns
  // SQLSTATE 57014 with Fault::Client (a requested stop, not a failure).
  const std::atomic<bool>* cancel = nullptr;
};

// Copies the rows of `buckets` of every table from source to target, in `streams` streams at once
// (each on its own thread and connections, one on the caller's), each over its share of the
// buckets. Per stream:
// Source: one READ ONLY REPEATABLE READ transaction importing `snapshot_name`, then per table
//   COPY (SELECT <cols> FROM <t> WHERE shardwire.bucket_of(<key>::<type>, N) = ANY('{..}'::int[]))
//   TO STDOUT.
// Target, per table, one transaction: SET LOCAL session_replication_role = replica (the buckets
// are fenced there; the trigger must not fire); DELETE the stream's buckets' rows (an earlier,
// interrupted copy's); COPY <t> (<cols>) FROM STDIN; COMMIT. So a table's share is copied whole or
// not at all, the streams never touch the same rows, and re-running the copy after any failure is
// safe. A stream that fails stops the others (they roll back their table in progress); the
// result is the first failure.
// Columns: every non-dropped, non-generated column of the source table, by name (generated
// columns are recomputed by the target). Data is streamed one CopyData message at a time, never
// buffered; throttled to rows_per_sec over the whole copy.
// Errors carry the SQLSTATE and the side: "copy of orders from s0: ..." / "... to s1: ...".
Result<CopyProgress> copy_buckets(const CopyOptions& options);

// The streams' shares of `buckets`: min(streams, buckets) sets (at least one), bucket i of the
// list to share i mod n, so neighbouring buckets (often alike in size) go to different streams.
std::vector<BucketSet> split_for_streams(const BucketSet& buckets, int streams);

// Rows of `buckets` on this shard, over all tables (for progress percentages).
Result<uint64_t> count_rows(PGconn* conn, const std::vector<config::ShardedTable>& tables,
                            const BucketSet& buckets);

// For every serial/identity column of the tables on `target`: moves its sequence so the next
// value is past max(column) over the rows of `buckets` whose values lie within the sequence's
// MINVALUE..MAXVALUE (setval only when the sequence is behind; never backwards). Copied values
// outside those bounds were numbered in another shard's id range and never collide with this
// shard's (docs/architecture.md "Globally unique ids"). Run before the target takes writes for the moved
// buckets. Only the moved rows are read (through the bucket index when there is one): the target's other rows
// got their values from this sequence, or from an earlier move that advanced it. Ascending sequences only.
Status advance_sequences(PGconn* target, const std::vector<config::ShardedTable>& tables,
                         const BucketSet& buckets);

// ---- SQL pieces shared with the verifier ------------------------------------------------------

// Runs SQL and returns the last result when it is COMMAND_OK/TUPLES_OK. Without params: simple
// protocol (several statements allowed, the first error stops). With params: one statement,
// extended protocol, text parameters. Errors: "<context>: <server message>" with its SQLSTATE.
Result<catalog::PgResultPtr> run_sql(PGconn* conn, const std::string& sql, const std::string& context,
                                     const std::vector<std::optional<std::string>>& params = {});

// Identifiers and bucket expressions are spelled by catalog_sql.h (the DDL epilogue's bucket
// index must match the expression these queries use).
using sqltext::bucket_expression;
using sqltext::quote_identifier;

// `<bucket_expression> = ANY('{1,5,9}'::int[])`.
Result<std::string> bucket_filter(const config::ShardedTable& table, const BucketSet& buckets);

// The table's name as this server spells it in SQL (`$1::regclass::text`: quoted as needed,
// schema-qualified when not on the search path). 42P01 when it does not exist.
Result<std::string> resolve_table(PGconn* conn, const std::string& name);

}  // namespace sw::mover
