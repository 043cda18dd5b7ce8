#include "session/transaction_shards.h"

#include <algorithm>
#include <utility>

namespace sw::session {

void TransactionShards::begin(std::string begin) {
  open_ = true;
  replay_ = std::move(begin);
  touched_.clear();
  writer_ = -1;
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
  if (writer_ >= 0 && writer_ != shard) return cross_shard_write(writer_name_, shard_name);
  writer_ = shard;
  writer_name_ = shard_name;
  return Status::ok();
}

CommitPlan TransactionShards::commit_plan(const std::vector<int>& legs) const {
  CommitPlan plan;
  plan.first.reserve(legs.size());
  for (int shard : legs) {
    if (shard == writer_)
      plan.last = shard;
    else
      plan.first.push_back(shard);
  }
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
  writer_ = -1;
  writer_name_.clear();
}

Status TransactionShards::cross_shard_write(const std::string& first, const std::string& second) {
  return Status::client(
      "0A000", "the transaction wrote on shard " + first + " and this statement writes on shard " + second +
                   ": writes on two shards in one transaction need two-phase commit, which "
                   "shardwire does not do yet; the transaction is aborted (ROLLBACK, then write "
                   "each shard in its own transaction)");
}

}  // namespace sw::session
