// Fanout on the session's servers (keep_servers; docs/architecture.md §5.6): a COPY ... TO STDOUT
// inside the client's transaction block runs on the transaction's legs and joins the shards it
// lacks, so its rows include the transaction's own writes. No server goes back to a pool from
// here: every leg is read to its ReadyForQuery, and every server goes back to the session.
#include <utility>

#include "session/fanout.h"

namespace sw::session {

void Fanout::keep_servers(std::vector<EveryShardTransaction::Target> targets, bool in_transaction,
                          EveryShardTransaction::HandBack hand_back) {
  held_ = true;
  held_in_transaction_ = in_transaction;
  hand_back_ = std::move(hand_back);
  for (size_t i = 0; i < legs_.size() && i < targets.size(); ++i) {
    legs_[i].shard_index = targets[i].index;
    legs_[i].lent = targets[i].lent;
    legs_[i].begin = std::move(targets[i].begin);
  }
}

// Every held server goes back to the session with the ReadyForQuery messages it still owes (a
// failed run's legs may be mid-statement); a server that never arrived is handed back as none.
void Fanout::hand_back_held() {
  std::vector<EveryShardTransaction::Handed> handed;
  handed.reserve(legs_.size());
  for (Leg& leg : legs_) {
    EveryShardTransaction::Handed server;
    server.shard = leg.shard_index;
    server.lent = leg.lent != nullptr;
    server.ready_owed = leg.ready_owed + leg.swallow_ready;
    if (leg.backend != nullptr) {
      leg.backend->connection().resume_reading();
      leg.backend->detach();
      server.backend = std::exchange(leg.backend, nullptr);
    }
    leg.done = true;
    handed.push_back(server);
  }
  // The session's answer (a refusal of the outcome) concerns writes only: a COPY TO wrote nothing.
  (void)hand_back_(std::move(handed), errored_ ? error_ : Status::ok());
}

}  // namespace sw::session
