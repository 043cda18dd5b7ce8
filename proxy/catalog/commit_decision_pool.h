// The catalog connections that record two-phase commit decisions for every worker of a process
// (the app owns one and calls it from each worker's SessionHost::decide_commit). A few
// connections, shared, used only on libuv's thread pool: recording blocks on the catalog.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "catalog/pq_handle.h"
#include "common/status.h"

namespace sw::catalog {

class CommitDecisionPool {
 public:
  explicit CommitDecisionPool(std::string dsn) : dsn_(std::move(dsn)) {}

  // Blocking: record_commit_decision (two_phase.h) over one of the connections: true when this
  // call decided commit, false when recovery had decided abort first; an error (never naming the
  // DSN's password) when the catalog failed: the insert may or may not have committed.
  Result<bool> record_commit(const std::string& gid, const std::vector<std::string>& shards);

 private:
  struct Idle {
    PgConnPtr conn;
    std::chrono::steady_clock::time_point since;
  };
  // An idle connection that still answers, or a new one; null with `error` set when none.
  PgConnPtr take(Status* error);
  void give_back(PgConnPtr conn);

  static constexpr size_t kMaxIdle = 4;
  std::string dsn_;
  std::mutex mutex_;
  std::vector<Idle> idle_;  // guarded by mutex_
};

}  // namespace sw::catalog
