// The admin console: executes one command text and answers with complete protocol messages
// (without the ReadyForQuery, which the session adds). Runs on the admin client's worker thread;
// whatever needs other threads or blocking I/O goes through ConsoleHost, which calls back on
// that same thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "admin/command.h"
#include "catalog/id_slots.h"
#include "catalog/migration.h"
#include "catalog/routers.h"
#include "common/status.h"
#include "config/config.h"
#include "router/directory.h"
#include "stats/snapshot.h"
#include "twopc/in_doubt.h"

namespace sw::admin {

struct DirectoryStatus {
  std::shared_ptr<const router::Directory> directory;  // null until one was loaded
  std::string source;                                  // "catalog" or "static" (no catalog configured)
  int64_t loaded_at_us = 0;                            // wall clock of the last confirmed load
  bool lease_valid = true;
};

struct PlannedMigration {
  std::string source, target;
  std::vector<uint32_t> buckets;
  int64_t id = 0;  // 0 for DRY RUN
  // REBALANCE: the data the buckets hold (measured when planned), and every shard's expected
  // data after the whole plan (mover::describe_spread; the same on every row of a plan).
  uint64_t rows = 0, bytes = 0;
  // REBALANCE: the whole plan's rows and bytes, and (by data) the least rows and bytes any plan
  // moves to bring every target within the tolerance (mover::minimum_to_move). Unset: NULL.
  std::optional<uint64_t> plan_rows, plan_bytes, minimum_rows, minimum_bytes;
  std::string expected_spread;
};

// One shard's view of a bucket (VERIFY BUCKET).
struct BucketCheck {
  std::string shard;
  std::string role;  // "owner", "target" (a migration copies it there), "source" (rollback window)
  uint64_t rows = 0;
  std::string checksum;  // order-independent sum of row hashes
};

// One shard's copy of a reference table (VERIFY REFERENCE).
struct ReferenceCheck {
  std::string shard;
  bool exists = false;  // the table is on the shard
  uint64_t rows = 0;
  std::string checksum;  // order-independent sum of row hashes
  bool matches = false;  // same rows and checksum as the default shard's copy
};

struct ProxyState {
  bool paused = false;  // PAUSE completed or in progress
  bool shutting_down = false;
  int64_t started_at_us = 0;
  // Shard name -> "yes" | "no": its configured login is a superuser (checked at start).
  std::map<std::string, std::string> shard_superuser;
};

class ConsoleHost {
 public:
  virtual ~ConsoleHost() = default;
  virtual std::shared_ptr<const config::Config> config() = 0;
  // Snapshots of every worker merged; `lists`: include per-client and per-server rows.
  virtual void gather(bool lists, std::function<void(stats::Snapshot)> done) = 0;
  virtual DirectoryStatus directory_status() = 0;
  virtual void list_routers(std::function<void(Result<std::vector<catalog::RegisteredRouter>>)> done) = 0;
  // The catalog's id slots (shardwire.id_slots), read off the event loop.
  virtual void list_id_slots(std::function<void(Result<std::vector<catalog::IdSlot>>)> done) = 0;
  // The two-phase transactions prepared on the shards (twopc/in_doubt.h), read off the event loop.
  virtual void list_in_doubt(std::function<void(Result<std::vector<twopc::InDoubtTransaction>>)> done) = 0;
  virtual ProxyState state() = 0;
  // Completes when no transaction runs any more; new ones are held until resume().
  virtual void pause(std::function<void()> done) = 0;
  virtual Status resume() = 0;
  virtual void reload(std::function<void(Status)> done) = 0;
  virtual void shutdown(ShutdownMode mode) = 0;
  virtual void kill_client(uint64_t id, std::function<void(bool found)> done) = 0;
  virtual void reconnect() = 0;
  // The mover's commands: catalog work off the event loop, answers on this thread.
  // One migration per shard the buckets are on now.
  virtual void move_buckets(const std::string& list, const std::string& target,
                            std::function<void(Result<std::vector<PlannedMigration>>)> done) = 0;
  // by_buckets: even bucket counts with the fewest moves; else even data.
  virtual void rebalance(const std::vector<std::string>& targets, bool by_buckets, bool dry_run,
                         std::function<void(Result<std::vector<PlannedMigration>>)> done) = 0;
  virtual void list_migrations(std::function<void(Result<std::vector<catalog::Migration>>)> done) = 0;
  virtual void request_migration(int64_t id, catalog::MigrationRequest request,
                                 std::function<void(Status)> done) = 0;
  virtual void verify_bucket(uint32_t bucket, std::function<void(Result<std::vector<BucketCheck>>)> done) = 0;
  // Every shard's copy of a configured reference table, compared with the default shard's.
  virtual void verify_reference(const std::string& table,
                                std::function<void(Result<std::vector<ReferenceCheck>>)> done) = 0;
};

class Console {
 public:
  explicit Console(ConsoleHost& host) : host_(host) {}
  // `reply` is called exactly once, on this thread, possibly before execute() returns.
  void execute(std::string_view text, const std::function<void(std::string)>& reply);

 private:
  void show(const Command& command, const std::function<void(std::string)>& reply);
  void control(const Command& command, const std::function<void(std::string)>& reply);
  void mover(const Command& command, const std::function<void(std::string)>& reply);  // console_mover.cc
  ConsoleHost& host_;
};

}  // namespace sw::admin
