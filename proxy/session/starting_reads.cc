#include "session/starting_reads.h"

#include <utility>

namespace sw::session {

uint64_t StartingReads::add(uint64_t version, Expire expire) {
  const uint64_t id = next_id_++;
  reads_.emplace(id, Read{version, std::move(expire)});
  return id;
}

void StartingReads::started(uint64_t id) {
  if (reads_.erase(id) != 0) run_waiters();
}

void StartingReads::after_older(uint64_t version, std::function<void()> done) {
  if (!any_older(version)) {
    done();
    return;
  }
  waiters_.push_back(Waiter{version, std::move(done)});
}

// The expire callbacks end registrations (started()), so they are collected first.
void StartingReads::expire_older(uint64_t version, const Status& why) {
  std::vector<Expire> stale;
  for (const auto& [id, read] : reads_) {
    if (read.version < version) stale.push_back(read.expire);
  }
  for (Expire& expire : stale) expire(why);
}

bool StartingReads::any_older(uint64_t version) const {
  for (const auto& entry : reads_) {
    if (entry.second.version < version) return true;
  }
  return false;
}

// A waiter's `done` may add reads or waiters (it acknowledges a directory), so the ready ones are
// taken out before any runs.
void StartingReads::run_waiters() {
  std::vector<std::function<void()>> ready;
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    if (any_older(it->version)) {
      ++it;
      continue;
    }
    ready.push_back(std::move(it->done));
    it = waiters_.erase(it);
  }
  for (auto& done : ready) done();
}

void StartWatch::begin(StartingReads& reads, uint64_t version, StartingReads::Expire expire) {
  end();
  reads_ = &reads;
  id_ = reads.add(version, std::move(expire));
}

void StartWatch::end() {
  StartingReads* reads = std::exchange(reads_, nullptr);
  if (reads != nullptr) reads->started(id_);
}

}  // namespace sw::session
