// pool.size is a cap on server connections per (shard, login) across all workers. Each worker
// has its own Pool (no lock on the hot path); they share one Budget, which counts open servers
// with an atomic and, when a worker needs a server while the others hold the whole budget idle,
// asks them to close an idle one so the capacity moves where the clients are.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace sw::pool {

class Budget {
 public:
  // A worker's pool, as the budget reaches it: `post` runs a task on the pool's loop.
  struct Member {
    const void* id = nullptr;
    std::function<void(std::function<void()>)> post;
    std::function<void()> shed_one_idle;   // runs on the member's loop
    std::function<void()> capacity_freed;  // runs on the member's loop
  };

  explicit Budget(int size) : size_(size) {}

  // Takes one slot for a new server; false when the cap is reached.
  bool try_take();
  // A server closed: the slot goes back and members waiting for capacity hear about it.
  void give_back();
  // `requester` has waiting clients and no capacity: ask the others to close an idle server.
  void ask_others_to_shed(const void* requester);
  void set_size(int size) { size_.store(size); }
  int size() const { return size_.load(); }
  int open() const { return open_.load(); }

  void join(Member member);
  void leave(const void* id);
  // Marks whether a member has clients waiting for a server.
  void set_waiting(const void* id, bool waiting);

 private:
  std::atomic<int> size_;
  std::atomic<int> open_{0};
  std::mutex mutex_;
  std::vector<Member> members_;
  std::map<const void*, bool> waiting_;
};

// Budgets by pool key, shared by every worker of the process.
class BudgetRegistry {
 public:
  std::shared_ptr<Budget> get(const std::string& key, int size);

 private:
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Budget>> budgets_;
};

}  // namespace sw::pool
