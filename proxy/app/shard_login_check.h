// At start, on a thread of its own: is each shard's configured login (a DSN that names its user)
// a superuser? A superuser can drop the bucket fence trigger and switch fencing off, so shardwire
// warns, and SHOW SHARDS shows it. Logins per client user (a DSN without a user) are not checked.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "config/config.h"

namespace sw::app {

class ShardLoginCheck {
 public:
  explicit ShardLoginCheck(std::shared_ptr<const config::Config> config);
  ~ShardLoginCheck();  // waits for the check (each connection is bounded by its timeout)
  ShardLoginCheck(const ShardLoginCheck&) = delete;
  ShardLoginCheck& operator=(const ShardLoginCheck&) = delete;

  // Shard name -> "yes" | "no" for the shards checked so far.
  std::map<std::string, std::string> superuser() const;

 private:
  void run(const config::Config& config);

  mutable std::mutex mutex_;
  std::map<std::string, std::string> superuser_;
  std::thread thread_;
};

}  // namespace sw::app
