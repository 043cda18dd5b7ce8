// Fanout on the session's servers (keep_servers; docs/architecture.md §5.6): a COPY ... TO STDOUT
// inside the client's transaction block runs on the transaction's legs and joins the shards it
// lacks, so its rows include the transaction's own writes. No server goes back to a pool from
// here: every leg is read to its ReadyForQuery, and every server goes back to the session.
#include <utility>

#include "session/fanout.h"

namespace sw::session {

void Fanout::keep_servers(std::vector<EveryShardTransaction::Target> targets, bool in_transaction,
                          EveryShardTransaction::HandBack hand_back) {
  held_.keep(legs_, std::move(targets), in_transaction, std::move(hand_back));
}

// Every held server goes back to the session, reading again (a leg paused while it waited for its
// turn), with the ReadyForQuery messages it still owes, its prologue's included.
void Fanout::hand_back_held() {
  for (Leg& leg : legs_) {
    if (leg.backend != nullptr) leg.backend->connection().resume_reading();
  }
  held_.hand_back(legs_, errored_ ? error_ : Status::ok(),
                  [](const Leg& leg) { return leg.ready_owed + leg.swallow_ready; });
}

}  // namespace sw::session
