#include "catalog/two_phase_recovery.h"

#include "catalog/pq.h"
#include "catalog/two_phase.h"
#include "catalog/two_phase_shards.h"
#include "common/log.h"

namespace sw::catalog {
namespace {

const ConnectOptions kConnectOptions{.application_name = "shardwire two-phase recovery",
                                     .connect_timeout_s = 2};

const config::Shard* find_shard(const std::vector<config::Shard>& shards, const std::string& name) {
  for (const config::Shard& s : shards)
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace

TwoPhaseRecovery::TwoPhaseRecovery(config::Config config, RecoveryOptions options)
    : catalog_dsn_(config.catalog.dsn), options_(options), shards_(std::move(config.shards)) {}

TwoPhaseRecovery::~TwoPhaseRecovery() { stop(); }

void TwoPhaseRecovery::start() {
  thread_ = std::thread([this] { run(); });
}

void TwoPhaseRecovery::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  catalog_.reset();
  links_.clear();
  holds_lock_ = false;
}

void TwoPhaseRecovery::update_config(const config::Config& config) {
  std::lock_guard<std::mutex> lock(mu_);
  shards_ = config.shards;
}

void TwoPhaseRecovery::run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    lock.unlock();
    round();
    ++rounds_;
    lock.lock();
    cv_.wait_for(lock, options_.period, [this] { return stopping_; });
  }
}

void TwoPhaseRecovery::note_failure(const std::string& target, const Status& error) {
  auto [it, inserted] = outages_.try_emplace(target, error.message);
  if (!inserted) return;  // this outage was logged when it began
  // 42P01: a catalog that `shardwire init` of this version has not upgraded yet.
  const char* fix = error.sqlstate == "42P01" ? "; run shardwire init to add shardwire.transactions" : "";
  LOG_WARN("two-phase recovery: %s unreachable, retried every round: %s [%s]%s", target.c_str(),
           error.message.c_str(), error.sqlstate.c_str(), fix);
}

void TwoPhaseRecovery::note_success(const std::string& target) {
  if (outages_.erase(target) > 0) LOG_INFO("two-phase recovery: %s reachable again", target.c_str());
}

void TwoPhaseRecovery::drop_catalog(const Status& why) {
  catalog_.reset();  // closing the session releases the advisory lock
  if (holds_lock_.exchange(false)) LOG_INFO("two-phase recovery: lost the catalog session and its lock");
  in_doubt_ = 0;
  note_failure("catalog", why);
}

// Connects and takes the lock when this instance does not hold it; true while it does.
bool TwoPhaseRecovery::ensure_catalog() {
  if (catalog_ && connection_lost(catalog_.get())) drop_catalog(Status::server("08006", "connection lost"));
  if (!catalog_) {
    auto conn = connect(catalog_dsn_, "catalog", kConnectOptions);
    if (!conn) {
      drop_catalog(conn.status());
      return false;
    }
    catalog_ = std::move(*conn);
  }
  if (holds_lock_) return true;
  auto res =
      query(catalog_.get(), "SELECT pg_try_advisory_lock($1::bigint)", {std::to_string(kRecoveryLockKey)});
  if (!res) {
    drop_catalog(res.status());
    return false;
  }
  if (text_value(res->get(), 0, 0) != "t") {
    note_success("catalog");
    return false;  // another instance resolves
  }
  holds_lock_ = true;
  LOG_INFO("two-phase recovery: this instance resolves in-doubt transactions (advisory lock %lld)",
           static_cast<long long>(kRecoveryLockKey));
  return true;
}

PGconn* TwoPhaseRecovery::shard_connection(const config::Shard& shard) {
  ShardLink& link = links_[shard.name];
  if (link.conn && (link.dsn != shard.dsn || connection_lost(link.conn.get()))) link.conn.reset();
  if (!link.conn) {
    auto conn = connect(shard.dsn, "shard " + shard.name, kConnectOptions);
    if (!conn) {
      note_failure("shard " + shard.name, conn.status());
      return nullptr;
    }
    link.conn = std::move(*conn);
    link.dsn = shard.dsn;
  }
  return link.conn.get();
}

std::vector<twopc::ShardPrepared> TwoPhaseRecovery::read_shards(const std::vector<config::Shard>& shards) {
  std::vector<twopc::ShardPrepared> out;
  for (const config::Shard& shard : shards) {
    twopc::ShardPrepared read{shard.name, false, {}};
    if (PGconn* conn = shard_connection(shard)) {
      auto prepared = list_prepared(conn);
      if (prepared) {
        read.reachable = true;
        read.prepared = std::move(*prepared);
        note_success("shard " + shard.name);
      } else {
        links_[shard.name].conn.reset();
        note_failure("shard " + shard.name, prepared.status());
      }
    }
    out.push_back(std::move(read));
  }
  return out;
}

// Finishes `gid` on one shard; 1 when it is no longer prepared there.
int TwoPhaseRecovery::resolve(const std::string& shard_name, const std::string& gid,
                              twopc::TwoPhaseDecision decision, const std::vector<config::Shard>& shards) {
  const config::Shard* shard = find_shard(shards, shard_name);
  PGconn* conn = shard ? shard_connection(*shard) : nullptr;
  if (!conn) return 0;
  auto done = finish_prepared(conn, gid, decision);
  if (!done) {
    LOG_WARN("two-phase recovery: %s PREPARED '%s' on shard %s failed, retried next round: %s [%s]",
             decision == twopc::TwoPhaseDecision::Commit ? "COMMIT" : "ROLLBACK", gid.c_str(),
             shard_name.c_str(), done.status().message.c_str(), done.status().sqlstate.c_str());
    if (connection_lost(conn)) links_[shard_name].conn.reset();
    return 0;
  }
  if (*done == FinishOutcome::Gone) return 1;  // its coordinator finished it meanwhile
  (decision == twopc::TwoPhaseDecision::Commit ? recovered_commit_ : recovered_abort_)++;
  LOG_INFO("two-phase recovery: %s PREPARED '%s' on shard %s (decision %s)",
           decision == twopc::TwoPhaseDecision::Commit ? "COMMIT" : "ROLLBACK", gid.c_str(),
           shard_name.c_str(), twopc::decision_name(decision));
  return 1;
}

void TwoPhaseRecovery::round() {
  if (!ensure_catalog()) {
    in_doubt_ = 0;
    return;
  }
  std::vector<config::Shard> shards;
  {
    std::lock_guard<std::mutex> lock(mu_);
    shards = shards_;
  }
  // Decisions first, then the shards (two_phase_plan.h: what makes forgetting a row safe).
  auto decisions = load_decisions(catalog_.get());
  if (!decisions) return drop_catalog(decisions.status());
  note_success("catalog");  // only a round that read the decisions ends an outage
  std::vector<twopc::ShardPrepared> read = read_shards(shards);
  twopc::RecoveryPlan plan = twopc::plan_recovery(read, *decisions, options_.grace, options_.abort_retention);
  int64_t prepared = 0;
  for (const twopc::ShardPrepared& s : read) prepared += static_cast<int64_t>(s.prepared.size());
  int64_t finished = 0;
  for (const twopc::Resolution& r : plan.resolve) finished += resolve(r.shard, r.gid, r.decision, shards);
  for (const twopc::PresumedAbort& p : plan.presume) {
    std::vector<std::string> holders;
    for (const twopc::Resolution& leg : p.legs) holders.push_back(leg.shard);
    auto decided = record_abort_decision(catalog_.get(), p.gid, holders);
    if (!decided) return drop_catalog(decided.status());
    if (*decided == twopc::TwoPhaseDecision::Abort)
      LOG_INFO("two-phase recovery: '%s' prepared without a decision for over %llds: abort recorded",
               p.gid.c_str(), static_cast<long long>(options_.grace.count()));
    for (const twopc::Resolution& leg : p.legs) finished += resolve(leg.shard, leg.gid, *decided, shards);
  }
  for (const std::string& gid : plan.forget) {
    if (Status s = forget_decision(catalog_.get(), gid); !s) return drop_catalog(s);
  }
  in_doubt_ = prepared - finished;
}

}  // namespace sw::catalog
