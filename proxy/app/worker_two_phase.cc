// Worker: the two-phase commit decisions its sessions ask for (SessionHost::decide_commit).
#include <memory>
#include <utility>

#include "app/worker.h"
#include "catalog/commit_decision_pool.h"
#include "twopc/gid.h"

namespace sw::app {

std::string Worker::next_two_phase_gid() {
  return twopc::two_phase_gid(directory_access_.gid_instance, index_, ++two_phase_seq_);
}

// The decision is recorded on libuv's thread pool; `done` runs back on this loop. Without a
// catalog no transaction gets here (a second written shard is refused), but the answer would be
// unknown, never a commit nothing recorded.
void Worker::decide_commit(const std::string& gid, const std::vector<std::string>& shards,
                           std::function<void(twopc::Decision, std::string)> done) {
  std::shared_ptr<catalog::CommitDecisionPool> decisions = directory_access_.commit_decisions;
  if (!decisions) {
    loop_.post([done = std::move(done)] { done(twopc::Decision::Unknown, "no catalog configured"); });
    return;
  }
  auto answer = std::make_shared<Result<bool>>(Status::proxy("XX000", "not run"));
  loop_.run_blocking([decisions, answer, gid, shards] { *answer = decisions->record_commit(gid, shards); },
                     [answer, done = std::move(done)] {
                       if (!*answer) {
                         done(twopc::Decision::Unknown, answer->status().message);
                         return;
                       }
                       done(answer->value() ? twopc::Decision::Commit : twopc::Decision::Abort, {});
                     });
}

}  // namespace sw::app
