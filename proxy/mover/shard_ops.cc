#include "mover/shard_ops.h"

#include <poll.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "catalog/pq.h"
#include "mover/copier.h"
#include "sqltext/catalog_sql.h"

namespace sw::mover {
namespace {

using catalog::error_status;
using catalog::exec;
using catalog::query;
using catalog::text_value;
using Clock = std::chrono::steady_clock;

constexpr auto kPoll = std::chrono::milliseconds(2);
// Acknowledgements wake the wait by NOTIFY; this poll only covers a catalog whose schema predates
// the routers_version trigger (not yet upgraded by `shardwire init`).
constexpr auto kAckPoll = std::chrono::milliseconds(20);

// Blocks until the connection has input (a NOTIFY) or `timeout` passes, then drops every
// notification received. False when the connection broke.
bool wait_for_notification(PGconn* conn, std::chrono::milliseconds timeout) {
  bool notified = false;
  while (PGnotify* n = PQnotifies(conn)) {  // received while an earlier statement ran
    notified = true;
    PQfreemem(n);
  }
  if (notified) return true;
  pollfd fd{PQsocket(conn), POLLIN, 0};
  const int rc = poll(&fd, 1, static_cast<int>(std::max<int64_t>(timeout.count(), 0)));
  if (rc > 0 && !PQconsumeInput(conn)) return false;
  while (PGnotify* n = PQnotifies(conn)) PQfreemem(n);
  return true;
}

Status failed(const Status& status, const std::string& what) {
  Status out = status;
  out.message = what + ": " + status.message;
  return out;
}

}  // namespace

Status check_tables(PGconn* shard, const std::string& shard_name,
                    const std::vector<config::ShardedTable>& tables) {
  for (const auto& table : tables) {
    auto name = resolve_table(shard, table.name);
    if (!name)
      return Status::config(
          "table " + table.name + " does not exist on shard " + shard_name +
          ": create it through shardwire (DDL on a sharded table runs on every shard), then move");
    auto keyed =
        query(shard,
              "SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid "
              "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = ANY(i.indkey) "
              "WHERE c.oid = $1::regclass AND a.attname = $2 AND "
              "((c.relreplident = 'd' AND i.indisprimary) OR (c.relreplident = 'i' AND i.indisreplident))",
              {*name, table.key});
    if (!keyed) return keyed.status();
    if (PQntuples(keyed->get()) == 0)
      return Status::config("table " + table.name + " on shard " + shard_name +
                            " has no primary key (or replica identity index) that includes its shard key " +
                            table.key + ": the mover applies updates and deletes by that key");
  }
  return Status::ok();
}

Status ensure_publication(PGconn* shard, const std::string& name,
                          const std::vector<config::ShardedTable>& tables) {
  auto exists = query(shard, "SELECT 1 FROM pg_publication WHERE pubname = $1", {name});
  if (!exists) return failed(exists.status(), "publication " + name);
  if (PQntuples(exists->get()) > 0) return Status::ok();
  std::string list;
  for (const auto& table : tables) {
    auto resolved = resolve_table(shard, table.name);
    if (!resolved) return resolved.status();
    list += (list.empty() ? "" : ", ") + *resolved;
  }
  return exec(shard, "CREATE PUBLICATION " + quote_identifier(name) + " FOR TABLE " + list);
}

Status drop_publication(PGconn* shard, const std::string& name) {
  if (name.empty()) return Status::ok();
  return exec(shard, "DROP PUBLICATION IF EXISTS " + quote_identifier(name));
}

Status drop_progress(PGconn* shard, int64_t stream_id) {
  auto res = query(shard, "DELETE FROM shardwire.mover_progress WHERE migration_id = $1",
                   {std::to_string(stream_id)});
  if (!res && res.status().sqlstate == "42P01") return Status::ok();  // no stream ever ran there
  return res ? Status::ok() : res.status();
}

bool slot_exists(PGconn* shard, const std::string& name) {
  auto res = query(shard, "SELECT 1 FROM pg_replication_slots WHERE slot_name = $1", {name});
  return res && PQntuples(res->get()) > 0;
}

Status drop_slot(PGconn* shard, const std::string& name) {
  if (name.empty()) return Status::ok();
  auto deadline = Clock::now() + std::chrono::seconds(10);
  while (true) {
    auto res = query(shard,
                     "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots "
                     "WHERE slot_name = $1 AND active_pid IS NOT NULL",
                     {name});
    if (!res) return failed(res.status(), "slot " + name);
    auto dropped = query(shard,
                         "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                         "WHERE slot_name = $1 AND active_pid IS NULL",
                         {name});
    if (dropped && !slot_exists(shard, name)) return Status::ok();
    if (Clock::now() > deadline)
      return dropped ? Status::server("55006", "replication slot " + name + " stays active; cannot drop it")
                     : failed(dropped.status(), "drop slot " + name);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Result<uint64_t> slot_retained_bytes(PGconn* shard, const std::string& name) {
  auto res = query(shard,
                   "SELECT coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn), 0)::bigint "
                   "FROM pg_replication_slots WHERE slot_name = $1",
                   {name});
  if (!res) return res.status();
  if (PQntuples(res->get()) == 0) return uint64_t{0};
  int64_t bytes = 0;
  catalog::parse_int64(res->get(), 0, 0, &bytes);
  return static_cast<uint64_t>(bytes < 0 ? 0 : bytes);
}

Result<std::string> fence(PGconn* shard, const BucketSet& buckets, uint64_t version) {
  auto res = query(shard,
                   "INSERT INTO shardwire.fenced_buckets (bucket, version, holds_rows) "
                   "SELECT b, $2, true FROM unnest($1::int[]) b ON CONFLICT (bucket) "
                   "DO UPDATE SET version = EXCLUDED.version, fenced_at = now(), holds_rows = true",
                   {buckets.array_literal(), std::to_string(version)});
  if (!res) return failed(res.status(), "fence");
  // Autocommit: the fence is committed now; the clock is read after it.
  return shard_clock(shard);
}

Result<std::string> shard_clock(PGconn* shard) {
  auto clock = query(shard, "SELECT clock_timestamp()::text");
  if (!clock) return clock.status();
  return text_value(clock->get(), 0, 0);
}

Status mark_holding_rows(PGconn* shard, const BucketSet& buckets) {
  auto res = query(shard,
                   "UPDATE shardwire.fenced_buckets SET holds_rows = true "
                   "WHERE bucket = ANY($1::int[]) AND NOT holds_rows",
                   {buckets.array_literal()});
  return res ? Status::ok() : failed(res.status(), "marking fences as holding rows");
}

Status unfence(PGconn* shard, const BucketSet& buckets) {
  auto res = query(shard, "DELETE FROM shardwire.fenced_buckets WHERE bucket = ANY($1::int[])",
                   {buckets.array_literal()});
  return res ? Status::ok() : failed(res.status(), "unfence");
}

Result<bool> wait_for_drain(PGconn* shard, const std::string& since, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (true) {
    auto res = query(shard,
                     "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                     "AND pid <> pg_backend_pid() AND backend_type = 'client backend' "
                     "AND application_name <> $2 AND xact_start < $1::timestamptz",
                     {since, kMoverApplicationName});
    if (!res) return res.status();
    if (text_value(res->get(), 0, 0) == "0") return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kPoll);
  }
}

Result<int> terminate_drain_blockers(PGconn* shard, const std::string& since) {
  auto res =
      query(shard,
            "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid() "
            "AND backend_type = 'client backend' AND application_name <> $2 AND xact_start < $1::timestamptz",
            {since, kMoverApplicationName});
  if (!res) return res.status();
  return std::atoi(text_value(res->get(), 0, 0).c_str());
}

Result<Lsn> current_wal_lsn(PGconn* shard) {
  // The insert position covers every commit so far (with synchronous_commit = off a commit record
  // may lie past the write position). A transaction that writes WAL (a transactional logical
  // message, which pgoutput does not send unless asked) and commits synchronously flushes WAL
  // through that position, so the walsender can send it now, not after the WAL writer's next round.
  // One round trip: both statements run in one implicit transaction (an error rolls it back), and
  // SET LOCAL holds until its commit.
  auto res = run_sql(shard,
                     "SET LOCAL synchronous_commit = on; SELECT pg_current_wal_insert_lsn()::text, "
                     "pg_logical_emit_message(true, 'shardwire', 'position')",
                     "reading the WAL position");
  if (!res) return res.status();
  return parse_lsn(text_value(res->get(), 0, 0));
}

Result<uint64_t> delete_bucket_rows(PGconn* shard, const std::vector<config::ShardedTable>& tables,
                                    const BucketSet& buckets, int64_t rows_per_sec, uint64_t batch) {
  if (Status s = exec(shard, "SET session_replication_role = replica"); !s) return s;
  uint64_t total = 0;
  auto started = Clock::now();
  const std::vector<uint32_t>& list = buckets.list();
  for (const auto& table : tables) {
    auto name = resolve_table(shard, table.name);
    if (!name) return name.status();
    // A group of buckets at a time: a batch's index scan then passes over the rows earlier
    // batches deleted in its group only, not in the whole set (docs/architecture.md §8.8). A group
    // starts at one bucket and doubles, up to 64, while its buckets hold less than half a batch.
    size_t group = 1;
    for (size_t first = 0; first < list.size();) {
      const size_t end = std::min(list.size(), first + group);
      auto filter = bucket_filter(
          table,
          BucketSet(buckets.bucket_count(), std::vector<uint32_t>(list.begin() + static_cast<long>(first),
                                                                  list.begin() + static_cast<long>(end))));
      if (!filter) return filter.status();
      const std::string sql = "DELETE FROM " + *name + " WHERE ctid = ANY(ARRAY(SELECT ctid FROM " + *name +
                              " WHERE " + *filter + " LIMIT " + std::to_string(batch) + "))";
      uint64_t in_group = 0;
      while (true) {
        auto res = query(shard, sql);
        if (!res) return failed(res.status(), "delete moved rows of " + table.name);
        const uint64_t deleted = std::strtoull(PQcmdTuples(res->get()), nullptr, 10);
        total += deleted;
        in_group += deleted;
        if (rows_per_sec > 0) {
          auto due =
              started + std::chrono::microseconds(total * 1000000 / static_cast<uint64_t>(rows_per_sec));
          std::this_thread::sleep_until(due);
        }
        if (deleted < batch) break;
      }
      first = end;
      group = in_group < batch / 2 ? std::min<size_t>(group * 2, 64) : std::max<size_t>(group / 2, 1);
    }
  }
  if (Status s = exec(shard, "RESET session_replication_role"); !s) return s;
  // Every delete above has committed (autocommit) and found no row left.
  auto emptied = query(shard,
                       "UPDATE shardwire.fenced_buckets SET holds_rows = false "
                       "WHERE bucket = ANY($1::int[]) AND holds_rows",
                       {buckets.array_literal()});
  if (!emptied) return failed(emptied.status(), "marking fences as holding no rows");
  return total;
}

Result<uint64_t> publish_migrating(PGconn* catalog, const BucketSet& buckets, const std::string& source) {
  auto res =
      query(catalog,
            "UPDATE shardwire.buckets SET state = 'MIGRATING' WHERE bucket = ANY($1::int[]) AND shard = $2 "
            "RETURNING version",
            {buckets.array_literal(), source});
  if (!res) return failed(res.status(), "publish MIGRATING");
  if (PQntuples(res->get()) != static_cast<int>(buckets.list().size()))
    return Status::server("55000", "the buckets are no longer all on shard " + source);
  int64_t version = 0;
  catalog::parse_int64(res->get(), 0, 0, &version);
  return static_cast<uint64_t>(version);
}

Status publish_active_on(PGconn* catalog, const BucketSet& buckets, const std::string& shard) {
  auto res = query(catalog,
                   "UPDATE shardwire.buckets SET shard = $2, state = 'ACTIVE' WHERE bucket = ANY($1::int[]) "
                   "AND (shard <> $2 OR state <> 'ACTIVE')",
                   {buckets.array_literal(), shard});
  return res ? Status::ok() : failed(res.status(), "publish ACTIVE on " + shard);
}

Result<int> routers_behind(PGconn* catalog, uint64_t version, std::chrono::milliseconds read_lease) {
  auto res = query(catalog,
                   "SELECT count(*) FROM shardwire.routers WHERE heartbeat_at > now() - $2::interval "
                   "AND directory_version < $1",
                   {std::to_string(version), std::to_string(read_lease.count()) + " milliseconds"});
  if (!res) return res.status();
  return std::atoi(text_value(res->get(), 0, 0).c_str());
}

Status listen_for_acknowledgements(PGconn* catalog) {
  return exec(catalog, std::string("LISTEN ") + sqltext::kRoutersChannel);
}

Result<bool> wait_for_routers(PGconn* catalog, uint64_t version, std::chrono::milliseconds fresh,
                              std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  std::string fresh_ms = std::to_string(fresh.count()) + " milliseconds";
  while (true) {
    auto res = query(catalog,
                     "SELECT count(*) FROM shardwire.routers WHERE heartbeat_at > now() - $2::interval "
                     "AND directory_version < $1",
                     {std::to_string(version), fresh_ms});
    if (!res) return res.status();
    if (text_value(res->get(), 0, 0) == "0") return true;
    const auto now = Clock::now();
    if (now >= deadline) return false;
    // An acknowledgement committed after the count above sends a NOTIFY (the connection listens),
    // so waiting for one misses none.
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    if (!wait_for_notification(catalog, std::min(kAckPoll, left + std::chrono::milliseconds(1))))
      return error_status(catalog, nullptr, "waiting for routers' acknowledgements");
  }
}

}  // namespace sw::mover
