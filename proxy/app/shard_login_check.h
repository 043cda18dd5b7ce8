// At start, on a thread of its own: is each shard's configured login (a DSN that names its user)
// a superuser? A superuser can drop the bucket fence trigger and switch fencing off, so shardwire
// warns, and SHOW SHARDS shows it. It also warns when the shard's max_prepared_transactions is 0
// (writes across shards need two-phase commit). Logins per client user (a DSN without a user) are
// not checked.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "config/config.h"

namespace sw::app {

class ShardLoginCheck {
 public:
  // `finished` is called on the check's thread when it is done; the owner then calls join() from
  // its own thread, so no finished thread is left unjoined (ThreadSanitizer reports one at exit).
  ShardLoginCheck(std::shared_ptr<const config::Config> config, std::function<void()> finished);
  ~ShardLoginCheck();  // waits for the check (each connection is bounded by its timeout)

  void join();
  ShardLoginCheck(const ShardLoginCheck&) = delete;
  ShardLoginCheck& operator=(const ShardLoginCheck&) = delete;

  // Shard name -> "yes" | "no" for the shards checked so far.
  std::map<std::string, std::string> superuser() const;

 private:
  void run(const config::Config& config);

  std::function<void()> finished_;
  mutable std::mutex mutex_;
  std::map<std::string, std::string> superuser_;
  std::thread thread_;
};

}  // namespace sw::app
