#include "mover/mover_service.h"

#include <algorithm>

#include "catalog/migrations.h"
#include "catalog/pq.h"
#include "common/log.h"
#include "mover/migration_runner.h"

namespace sw::mover {
namespace {
constexpr auto kPollInterval = std::chrono::milliseconds(1000);
const catalog::ConnectOptions kCatalogOptions{.application_name = "shardwire mover"};
}  // namespace

MoverService::MoverService(std::shared_ptr<const config::Config> config) : config_(std::move(config)) {}

MoverService::~MoverService() { stop(); }

void MoverService::start() {
  thread_ = std::thread([this] { run(); });
}

void MoverService::stop() {
  stopping_ = true;
  wake();
  if (thread_.joinable()) thread_.join();
  catalog_.reset();  // the poll thread has ended
  std::map<int64_t, std::unique_ptr<MigrationRunner>> runners;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    runners.swap(runners_);
  }
  runners.clear();  // each destructor stops and joins its thread
}

void MoverService::update_config(std::shared_ptr<const config::Config> config) {
  std::lock_guard<std::mutex> lock(mutex_);
  config_ = std::move(config);  // runners started from now on use it
}

void MoverService::wake() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    woken_ = true;
  }
  wakeup_.notify_all();
}

void MoverService::run() {
  while (!stopping_) {
    poll();
    std::unique_lock<std::mutex> lock(mutex_);
    wakeup_.wait_for(lock, kPollInterval, [this] { return woken_ || stopping_.load(); });
    woken_ = false;
  }
}

// Starts runners for unfinished migrations nobody here runs yet (the advisory lock decides
// between processes), and forgets runners that ended.
void MoverService::poll() {
  std::shared_ptr<const config::Config> config;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    config = config_;
    for (auto it = runners_.begin(); it != runners_.end();) {
      if (it->second->finished())
        it = runners_.erase(it);
      else
        ++it;
    }
  }
  PGconn* conn = catalog_session(config->catalog.dsn);
  if (!conn) return;
  auto all = catalog::list_migrations(conn, /*active_only=*/false);
  if (!all) {
    LOG_DEBUG("mover: %s", all.status().message.c_str());
    if (catalog::connection_lost(conn)) catalog_.reset();  // the next poll connects again
    return;
  }
  std::array<uint64_t, catalog_rows::kMigrationStates> states{};
  double window = 0;
  for (const auto& m : *all) {
    ++states[static_cast<size_t>(m.state)];
    if (m.state == catalog_rows::MigrationState::RollbackWindow && m.rollback_seconds_left > 0)
      window = window == 0 ? m.rollback_seconds_left : std::min(window, m.rollback_seconds_left);
  }
  catalog_rows::RebalanceProgress rebalance = catalog_rows::rebalance_progress(*all);
  std::lock_guard<std::mutex> lock(mutex_);
  states_ = states;
  window_remaining_ = window;
  rebalance_ = rebalance;
  if (config->mover.max_concurrent <= 0) return;  // this instance routes only
  // Slots in use: this process's runners whose migrations copy, stream or cut over now, or are
  // about to (planned, e.g. held by schema drift).
  int busy = 0;
  for (const auto& m : *all)
    if (runners_.count(m.id) != 0 &&
        (catalog_rows::holds_mover_slot(m) || m.state == catalog_rows::MigrationState::Planned))
      ++busy;
  for (const auto& m : *all) {
    if (catalog_rows::is_final(m.state) || runners_.count(m.id) != 0) continue;
    bool needs_slot = m.state == catalog_rows::MigrationState::Planned || catalog_rows::holds_mover_slot(m);
    if (needs_slot) {
      if (busy >= config->mover.max_concurrent) continue;
      ++busy;
    }
    auto runner = std::make_unique<MigrationRunner>(m.id, config, counters_);
    runner->start();
    runners_.emplace(m.id, std::move(runner));
  }
}

PGconn* MoverService::catalog_session(const std::string& dsn) {
  if (catalog_ && (dsn != catalog_dsn_ || catalog::connection_lost(catalog_.get()))) catalog_.reset();
  if (!catalog_) {
    auto conn = catalog::connect(dsn, "catalog", kCatalogOptions);
    if (!conn) {
      LOG_DEBUG("mover: %s", conn.status().message.c_str());
      return nullptr;
    }
    catalog_ = std::move(*conn);
    catalog_dsn_ = dsn;
  }
  return catalog_.get();
}

MoverSnapshot MoverService::snapshot() const {
  MoverSnapshot s;
  s.copied_rows = counters_.copied_rows.load();
  s.copied_bytes = counters_.copied_bytes.load();
  s.applied_changes = counters_.applied_changes.load();
  s.verify_mismatches = counters_.verify_mismatches.load();
  s.drain_aborts = counters_.drain_aborts.load();
  s.stream_errors = counters_.stream_errors.load();
  s.drain_terminations = counters_.drain_terminations.load();
  s.cutover_pause = counters_.cutover_pause();
  std::lock_guard<std::mutex> lock(mutex_);
  s.migrations = states_;
  s.rollback_window_remaining_seconds = window_remaining_;
  s.rebalance = rebalance_;
  for (const auto& [id, runner] : runners_) {
    s.lag_bytes = std::max(s.lag_bytes, runner->lag_bytes());
    s.lag_seconds = std::max(s.lag_seconds, runner->lag_seconds());
  }
  return s;
}

}  // namespace sw::mover
