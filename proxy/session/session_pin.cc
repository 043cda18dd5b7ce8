// Session: pinning in transaction pooling (docs/architecture.md §5.7). A statement whose effect
// stays in the server's session (pinning.h) makes the client a session-pooled one from then on:
// its servers stay with it, and when it leaves each is reset with pool.server_reset_query like
// any session-pooled server. At most pool.max_pinned_clients clients (all workers) are pinned at
// once; past that the statement is refused before it runs. A pin for cursors WITH HOLD over
// several shards ends when the last of them does (unpin_if_no_held_cursor).
#include <atomic>

#include "common/log.h"
#include "config/config.h"
#include "session/session.h"

namespace sw::session {
namespace {

std::atomic<int> pinned_count{0};  // pinned clients of the process, all workers

bool take_pin_slot(int limit) {
  int now = pinned_count.load(std::memory_order_relaxed);
  while (now < limit) {
    if (pinned_count.compare_exchange_weak(now, now + 1, std::memory_order_relaxed)) return true;
  }
  return false;
}

}  // namespace

// In transaction pooling, a statement that would leave session state on the server pins the
// client to it, or is refused when the bound is reached.
Status Session::refuse_unpoolable(const parser::StatementFacts& statement, bool merged_cursor) {
  const bool held_only = pools_.pinned == PinReason::HoldCursor;
  if (pools_.session_pooling && !held_only) return Status::ok();
  PinReason reason = pin_reason(statement);
  if (reason == PinReason::None) return Status::ok();
  if (held_only) {  // pinned already: another reason keeps the pin past the held cursors
    if (reason != PinReason::HoldCursor) pools_.pinned = reason;
    if (reason == PinReason::HoldCursor && !merged_cursor) pools_.held_on_server = true;
    return Status::ok();
  }
  const int limit = host_.config().pool.pinned_limit();
  if (!take_pin_slot(limit)) {
    return Status::client(
        "53300", std::string(describe(reason)) + " keeps a client on its server until it disconnects, and " +
                     std::to_string(limit) +
                     " clients already are (pool.max_pinned_clients); retry later, avoid it (ON COMMIT DROP, "
                     "pg_advisory_xact_lock, a cursor without HOLD), or use pool.mode: session");
  }
  pools_.pinned = reason;
  pools_.held_on_server = reason == PinReason::HoldCursor && !merged_cursor;
  pools_.session_pooling = true;
  LOG_INFO("client=c%llu user=%s pinned to its servers until it disconnects: %s", (unsigned long long)id(),
           profile_.user.c_str(), std::string(describe(reason)).c_str());
  return Status::ok();
}

// A Query that pins its client leaves nothing on the server when it fails: one statement, outside
// a transaction block (its implicit transaction rolls back whatever it created), that takes no
// session-level advisory lock (not transactional: it stays taken).
bool Session::pin_undone_by_failure(const parser::QueryFacts& facts) const {
  return facts.statements.size() == 1 && !facts.statements.front().session_advisory_lock &&
         txn_.control.status() == 'I';
}

// The Query that pinned the client failed and left nothing behind (pin_undone_by_failure): the
// client is a transaction-pooled one again, and its server goes back to the pool.
void Session::unpin_after_failure() {
  LOG_INFO("client=c%llu no longer pinned: the statement that pinned it failed", (unsigned long long)id());
  unpin();
  pools_.session_pooling = false;
}

// A client pinned only by cursors WITH HOLD over several shards (the proxy knows each: MergedCursor)
// is a transaction-pooled one again once none is left (closed, rolled back, discarded), outside a
// transaction block, with no statement it named on its servers: they go back to the pool.
bool Session::unpin_if_no_held_cursor() {
  if (pools_.pinned != PinReason::HoldCursor || pools_.held_on_server || txn_.two_phase ||
      txn_.control.status() != 'I' || !txn_.leg.client_statements.empty())
    return false;
  for (const auto& [name, cursor] : txn_.cursors) {
    if (cursor->hold()) return false;
  }
  for (const LegAnswers& leg : txn_.parked) {
    if (!leg.client_statements.empty() || leg.server_status != 'I' || !leg.tracker.idle()) return false;
  }
  LOG_INFO("client=c%llu no longer pinned: its last cursor WITH HOLD is closed", (unsigned long long)id());
  unpin();
  pools_.session_pooling = false;
  return true;
}

// The client leaves: its pin slot is free again.
void Session::unpin() {
  if (pools_.pinned == PinReason::None) return;
  pools_.pinned = PinReason::None;
  pinned_count.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace sw::session
