#include "session/transaction_shards.h"

#include <algorithm>
#include <utility>

namespace sw::session {

void TransactionShards::begin(std::string begin) {
  open_ = true;
  replay_ = std::move(begin);
  touched_.clear();
  writers_.clear();
  writer_name_.clear();
}

void TransactionShards::on_server_status(char status) {
  if (status == 'I' || open_) return;
  begin("BEGIN");
}

void TransactionShards::note_replayed(std::string_view sql) {
  if (!open_) return;
  if (!replay_.empty()) replay_ += ";";
  replay_ += sql;
}

Status TransactionShards::on_statement(int shard, bool writes, const std::string& shard_name) {
  if (!open_) return Status::ok();
  if (std::find(touched_.begin(), touched_.end(), shard) == touched_.end()) touched_.push_back(shard);
  if (!writes) return Status::ok();
  if (!may_write(shard)) return cross_shard_write(writer_name_, shard_name, policy_);
  if (writers_.empty()) writer_name_ = shard_name;
  if (std::find(writers_.begin(), writers_.end(), shard) == writers_.end()) writers_.push_back(shard);
  return Status::ok();
}

bool TransactionShards::may_write(int shard) const {
  if (writers_.empty() || policy_ == CrossShardWrites::TwoPhase) return true;
  return std::find(writers_.begin(), writers_.end(), shard) != writers_.end();
}

CommitPlan TransactionShards::commit_plan(const std::vector<int>& legs) const {
  CommitPlan plan;
  plan.first.reserve(legs.size());
  auto written = [&](int shard) {
    return std::find(writers_.begin(), writers_.end(), shard) != writers_.end();
  };
  const bool two_phase =
      std::count_if(legs.begin(), legs.end(), [&](int shard) { return written(shard); }) >= 2;
  if (two_phase) plan.kind = CommitPlan::Kind::TwoPhase;
  for (int shard : legs) {
    if (!written(shard))
      plan.first.push_back(shard);
    else if (two_phase)
      plan.written.push_back(shard);
    else
      plan.last = shard;
  }
  if (two_phase) return plan;
  if (plan.last < 0 && !plan.first.empty()) {
    plan.last = plan.first.back();
    plan.first.pop_back();
  }
  return plan;
}

void TransactionShards::end() {
  open_ = false;
  replay_.clear();
  touched_.clear();
  writers_.clear();
  writer_name_.clear();
}

Status TransactionShards::cross_shard_write(const std::string& first, const std::string& second,
                                            CrossShardWrites policy) {
  const std::string why = policy == CrossShardWrites::RefuseNoCatalog
                              ? "two-phase commit needs catalog.dsn (the catalog records the commit "
                                "decisions), and this proxy has no catalog configured"
                              : "sharding.cross_shard_transactions is refuse in the proxy's config";
  return Status::client(
      "0A000", "the transaction wrote on shard " + first + " and this statement writes on shard " + second +
                   ": writes on two shards in one transaction need two-phase commit; " + why +
                   "; the transaction is aborted (ROLLBACK, then write each shard in its "
                   "own transaction)");
}

}  // namespace sw::session
