// The client's transaction and the servers it runs on. A transaction owns zero or more legs, one
// server per shard it touched. Today a transaction has at most one leg (transactions do not span
// shards) or, outside any transaction, a Fanout that runs one statement on every shard.
#pragma once

#include <memory>

#include "pool/pool.h"
#include "session/fanout.h"
#include "session/merge_fanout.h"
#include "session/response_tracker.h"
#include "session/transaction_control.h"
#include "wire/server_check.h"

namespace sw::session {

// One server borrowed for the transaction, on one shard.
struct Leg {
  pool::Backend* backend = nullptr;  // null: no leg
  int shard = -1;                    // index into the directory's shards
  ResponseTracker tracker;           // what the server still owes
  wire::ServerMessageCheck check;    // of the server's messages; reset when attached
  char server_status = 'I';          // as the server's last ReadyForQuery said
  // The server runs a Parse/Describe batch outside the client's transaction, which has no shard
  // yet (a deferred BEGIN): that batch must not pick the transaction's shard.
  bool outside_transaction = false;

  bool attached() const { return backend != nullptr; }
  // Back at a transaction boundary: nothing owed, no transaction, no extended batch open.
  bool at_boundary(bool batch_open) const { return tracker.idle() && server_status == 'I' && !batch_open; }
};

struct Transaction {
  TransactionControl control;          // deferred BEGIN, the status the client sees
  Leg leg;                             // the transaction's server, if it has one
  std::unique_ptr<Fanout> fanout;      // a statement running on every shard, outside any transaction
  std::unique_ptr<MergeFanout> merge;  // a read on every shard whose rows are merged

  bool holds_server() const { return leg.attached() || fanout != nullptr || merge != nullptr; }
};

}  // namespace sw::session
