#include "catalog/commit_decision_pool.h"

#include "catalog/pq.h"
#include "catalog/two_phase.h"

namespace sw::catalog {
namespace {

// A connection idle longer than this is checked (SELECT 1) before it records a decision: an
// insert that fails on a connection the catalog dropped meanwhile (a catalog restart) never ran,
// but the coordinator could not tell that failure from one after the insert committed.
constexpr auto kCheckAfterIdle = std::chrono::seconds(1);

}  // namespace

PgConnPtr CommitDecisionPool::take(Status* error) {
  for (;;) {
    Idle idle;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (idle_.empty()) break;
      idle = std::move(idle_.back());
      idle_.pop_back();
    }
    if (std::chrono::steady_clock::now() - idle.since < kCheckAfterIdle) return std::move(idle.conn);
    if (exec(idle.conn.get(), "SELECT 1").is_ok()) return std::move(idle.conn);
  }
  ConnectOptions options;
  options.application_name = "shardwire_two_phase";
  auto conn = connect(dsn_, "catalog", options);
  if (!conn) {
    *error = conn.status();
    return nullptr;
  }
  return std::move(*conn);
}

void CommitDecisionPool::give_back(PgConnPtr conn) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (idle_.size() < kMaxIdle) idle_.push_back({std::move(conn), std::chrono::steady_clock::now()});
}

Result<bool> CommitDecisionPool::record_commit(const std::string& gid,
                                               const std::vector<std::string>& shards) {
  Status error;
  PgConnPtr conn = take(&error);
  if (!conn) return error;
  Result<bool> decided = record_commit_decision(conn.get(), gid, shards);
  if (decided) give_back(std::move(conn));  // a failed one is dropped
  return decided;
}

}  // namespace sw::catalog
