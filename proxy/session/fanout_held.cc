// Fanout on the session's servers (keep_servers; docs/architecture.md §5.6): a COPY ... TO STDOUT
// inside the client's transaction block runs on the transaction's legs and joins the shards it
// lacks, so its rows include the transaction's own writes. No server goes back to a pool from
// here: every leg is read to its ReadyForQuery, and every server goes back to the session.
#include <utility>

#include "session/fanout.h"

namespace sw::session {

void Fanout::keep_servers(std::vector<LegEngine::Target> targets, bool in_transaction,
                          LegEngine::HandBack hand_back) {
  held_ = true;
  in_transaction_ = in_transaction;
  hand_back_ = std::move(hand_back);
  LegEngine::adopt_session_legs(engine_targets_, std::move(targets));
}

// Every held server goes back to the session, reading again, with the ReadyForQuery messages it
// still owes (the engine's count, its prologue's included). The session's answer (a refusal of
// the outcome) concerns writes only: a fan-out wrote nothing, so it is not read.
void Fanout::hand_back_held() {
  current_ = targets_.size();  // every leg is done
  (void)hand_back_(engine_->hand_over(), errored_ ? error_ : Status::ok());
}

}  // namespace sw::session
