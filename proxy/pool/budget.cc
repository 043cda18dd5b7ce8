#include "pool/budget.h"

#include <algorithm>

namespace sw::pool {

bool Budget::try_take() {
  int open = open_.load();
  while (open < size_.load()) {
    if (open_.compare_exchange_weak(open, open + 1)) return true;
  }
  return false;
}

void Budget::give_back() {
  open_.fetch_sub(1);
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Member& member : members_) {
    if (waiting_[member.id]) member.post(member.capacity_freed);
  }
}

void Budget::ask_others_to_shed(const void* requester) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Member& member : members_) {
    if (member.id != requester) member.post(member.shed_one_idle);
  }
}

void Budget::join(Member member) {
  std::lock_guard<std::mutex> lock(mutex_);
  members_.push_back(std::move(member));
}

void Budget::leave(const void* id) {
  std::lock_guard<std::mutex> lock(mutex_);
  members_.erase(
      std::remove_if(members_.begin(), members_.end(), [id](const Member& m) { return m.id == id; }),
      members_.end());
  waiting_.erase(id);
}

void Budget::set_waiting(const void* id, bool waiting) {
  std::lock_guard<std::mutex> lock(mutex_);
  waiting_[id] = waiting;
}

std::shared_ptr<Budget> BudgetRegistry::get(const std::string& key, int size) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& budget = budgets_[key];
  if (!budget) budget = std::make_shared<Budget>(size);
  budget->set_size(size);
  return budget;
}

}  // namespace sw::pool
