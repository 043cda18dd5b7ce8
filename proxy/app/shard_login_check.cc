#include "app/shard_login_check.h"

#include "catalog/shard_login.h"
#include "common/log.h"

namespace sw::app {

ShardLoginCheck::ShardLoginCheck(std::shared_ptr<const config::Config> config, std::function<void()> finished)
    : finished_(std::move(finished)), thread_([this, config = std::move(config)] { run(*config); }) {}

ShardLoginCheck::~ShardLoginCheck() { join(); }

void ShardLoginCheck::join() {
  if (thread_.joinable()) thread_.join();
}

std::map<std::string, std::string> ShardLoginCheck::superuser() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return superuser_;
}

void ShardLoginCheck::run(const config::Config& config) {
  for (const config::Shard& shard : config.shards) {
    if (shard.conn.user.empty()) continue;
    auto checked = catalog::check_shard_login(shard.dsn, "shard " + shard.name, /*connect_timeout_s=*/2);
    if (!checked) {
      LOG_DEBUG("shard %s: login not checked: %s", shard.name.c_str(), checked.status().message.c_str());
      continue;
    }
    bool superuser = checked->superuser;
    if (superuser)
      LOG_WARN(
          "shard %s: shardwire logs in as %s, a superuser, who can drop the bucket fence trigger and "
          "disable fencing; give applications a non-superuser role (README: \"Shard roles\")",
          shard.name.c_str(), shard.conn.user.c_str());
    const std::string advice =
        catalog::prepared_transactions_advice(shard.name, checked->max_prepared_transactions);
    if (!advice.empty()) LOG_WARN("%s", advice.c_str());
    std::lock_guard<std::mutex> lock(mutex_);
    superuser_[shard.name] = superuser ? "yes" : "no";
  }
  LOG_INFO("shard logins checked");
  if (finished_) finished_();
}

}  // namespace sw::app
