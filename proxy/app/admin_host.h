// The admin console's view of the running proxy, one per worker: answers arrive on that
// worker's thread (the admin client's), whichever threads did the work.
#pragma once

#include <memory>
#include <optional>

#include "admin/console.h"
#include "net/loop.h"
#include "net/timer.h"

namespace sw::app {

class Proxy;
class Worker;

class AdminHost : public admin::ConsoleHost {
 public:
  AdminHost(Proxy& proxy, Worker& worker) : proxy_(proxy), worker_(worker) {}

  std::shared_ptr<const config::Config> config() override;
  void gather(bool lists, std::function<void(stats::Snapshot)> done) override;
  admin::DirectoryStatus directory_status() override;
  void list_routers(std::function<void(Result<std::vector<catalog::RegisteredRouter>>)> done) override;
  void list_in_doubt(std::function<void(Result<std::vector<twopc::InDoubtTransaction>>)> done) override;
  void list_id_slots(std::function<void(Result<std::vector<catalog::IdSlot>>)> done) override;
  admin::ProxyState state() override;
  void pause(std::function<void()> done) override;
  Status resume() override;
  void reload(std::function<void(Status)> done) override;
  void shutdown(admin::ShutdownMode mode) override;
  void kill_client(uint64_t id, std::function<void(bool found)> done) override;
  void reconnect() override;
  // admin_mover.cc
  void move_buckets(const std::string& list, const std::string& target,
                    std::function<void(Result<std::vector<admin::PlannedMigration>>)> done) override;
  void rebalance(const std::vector<std::string>& targets, bool by_buckets, bool dry_run,
                 std::function<void(Result<std::vector<admin::PlannedMigration>>)> done) override;
  void list_migrations(std::function<void(Result<std::vector<catalog::Migration>>)> done) override;
  void request_migration(int64_t id, catalog::MigrationRequest request,
                         std::function<void(Status)> done) override;
  void verify_reference(const std::string& table,
                        std::function<void(Result<std::vector<admin::ReferenceCheck>>)> done) override;
  void verify_bucket(uint32_t bucket,
                     std::function<void(Result<std::vector<admin::BucketCheck>>)> done) override;

 private:
  // Runs `task` on this worker's thread.
  void here(std::function<void()> task);
  // Runs `work` (blocking I/O) on libuv's thread pool, then `done` with its result here.
  template <typename T>
  void off_loop(std::function<T()> work, std::function<void(T)> done) {
    auto result = std::make_shared<std::optional<T>>();
    worker_loop().run_blocking([result, work = std::move(work)] { result->emplace(work()); },
                               [result, done = std::move(done)] { done(std::move(**result)); });
  }
  net::Loop& worker_loop();
  void wait_until_idle(std::function<void()> done);

  Proxy& proxy_;
  Worker& worker_;
  std::unique_ptr<net::Timer> poll_timer_;  // PAUSE polling; made on the worker's thread
};

}  // namespace sw::app
