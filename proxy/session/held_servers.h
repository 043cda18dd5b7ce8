// What the fan-out runners (Fanout, MergeFanout) share about their legs' servers
// (docs/architecture.md §5.6): the prologue a leg's server gets before the statement, and
// keep_servers, a run on the session's servers (inside the client's transaction block, or in
// session pooling): each leg gets its target's shard index, the server the session lends (or none:
// a new server from the pool, sent the target's `begin` first, which joins it to the client's
// transaction), and at the run's end every server goes back to the session instead of a pool.
// The templates take a runner's legs, which have `shard_index`, `lent` and `begin` (set by keep),
// `backend` and `done`.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "pool/pool.h"
#include "session/every_shard_transaction.h"
#include "session/session_state.h"
#include "wire/messages.h"

namespace sw::session {

class HeldServers {
 public:
  // keep_servers: `targets` by leg. Inside the client's transaction (`in_transaction`) the
  // client's ReadyForQuery is the session's, not the runner's.
  template <class Leg>
  void keep(std::vector<Leg>& legs, std::vector<EveryShardTransaction::Target> targets, bool in_transaction,
            EveryShardTransaction::HandBack hand_back) {
    active_ = true;
    in_transaction_ = in_transaction;
    hand_back_ = std::move(hand_back);
    for (size_t i = 0; i < legs.size() && i < targets.size(); ++i) {
      legs[i].shard_index = targets[i].index;
      legs[i].lent = targets[i].lent;
      legs[i].begin = std::move(targets[i].begin);
    }
  }
  // keep() ran: the servers go back to the session, never to a pool from the runner.
  bool active() const { return active_; }
  bool in_transaction() const { return in_transaction_; }

  // Appends to `out` what a leg's server runs before the statement: the session's settings when it
  // lacks them (`RESET ALL;` and the SessionState signature, then recorded as applied), and with
  // the session's servers the leg's `begin`. Returns how many Query messages that is (each owes a
  // ReadyForQuery the client does not get).
  int prologue(std::string& out, pool::Backend& backend, const std::string& session_state,
               const std::string& begin) const {
    int queries = 0;
    if (backend.applied_state != session_state) {
      wire::encode_query(out, std::string(SessionState::kResetSql) + session_state);
      backend.applied_state = session_state;
      ++queries;
    }
    if (active_ && !begin.empty()) {
      wire::encode_query(out, begin);
      ++queries;
    }
    return queries;
  }

  // The run's end: every leg's server, detached, goes back to the session with the ReadyForQuery
  // it still owes (`owed(leg)`: a failed run's legs may be mid-statement); a server that never
  // arrived is handed back as none. Every leg is done. The session's answer (a refusal of the
  // outcome) concerns writes only: a fan-out wrote nothing, so it is not read.
  template <class Leg, class Owed>
  void hand_back(std::vector<Leg>& legs, const Status& error, Owed owed) {
    std::vector<EveryShardTransaction::Handed> handed;
    handed.reserve(legs.size());
    for (Leg& leg : legs) {
      EveryShardTransaction::Handed server;
      server.shard = leg.shard_index;
      server.lent = leg.lent != nullptr;
      server.ready_owed = owed(leg);
      if (leg.backend != nullptr) {
        leg.backend->detach();
        server.backend = std::exchange(leg.backend, nullptr);
      }
      leg.done = true;
      handed.push_back(server);
    }
    (void)hand_back_(std::move(handed), error);
  }

 private:
  bool active_ = false;
  bool in_transaction_ = false;
  EveryShardTransaction::HandBack hand_back_;
};

}  // namespace sw::session
