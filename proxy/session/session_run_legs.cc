// Session: a run on the transaction's legs (a cursor round, a merged read, a COPY TO, a COPY FROM,
// a write on several shards; docs/architecture.md §5.6), its start and its end. A run is a
// LegEngine on legs_: a shard the transaction holds a leg on moves no server, the run reads that
// leg (borrowed) and gives it back in place; a shard it has none on gets a new leg of legs_. The
// end: the verdict and the deferred BEGIN first (begin_run_end), the transaction's status last
// (finish_run_end), and on failure the settling of a leg the run used (settle_run_leg) and of the
// legs it did not (fail_legs_outside_run). Also the transaction's legs' answers by their leg
// of legs_ (parked_leg, drop_leg).
#include <algorithm>
#include <cassert>
#include <utility>

#include "common/log.h"
#include "net/loop.h"
#include "session/session.h"
#include "wire/message_writer.h"
#include "wire/messages.h"

namespace sw::session {
namespace {

// Fails a leg's transaction, as the statement's error fails it on a server that ran it.
constexpr const char* kFailTransaction =
    "DO $sw_abort$ BEGIN RAISE EXCEPTION USING ERRCODE = '25P02', MESSAGE = 'a statement of this "
    "transaction failed on another shard'; END $sw_abort$";

}  // namespace

std::vector<int> Session::every_shard() const {
  std::vector<int> shards;
  for (size_t i = 0; i < host_.directory()->shards().size(); ++i) shards.push_back(static_cast<int>(i));
  return shards;
}

// A run's targets on the transaction's legs (a run on legs_): one per shard of `shards`, in that
// order. A shard with a leg of the transaction starts as its server stands: in the transaction
// already, nothing; else the prologue that joins it (settings only when the leg is behind the
// session's). A shard without one gets a new leg of legs_, which joins the transaction. Outside a
// transaction nothing begins (a read).
Status Session::transaction_targets(const std::vector<int>& shards, bool in_transaction,
                                    std::vector<LegEngine::Target>* targets) {
  const router::Directory& directory = *host_.directory();
  std::string joining;
  if (in_transaction) joining = txn_.control.deferred() ? txn_.control.deferred_begin() : joining_prologue();
  for (int shard : shards) {
    LegEngine::Target target;
    Status error;
    target.pool = pool_for_shard(shard, &error);
    if (target.pool == nullptr) return error;
    target.shard = directory.shard_name(static_cast<uint16_t>(shard));
    target.index = shard;
    target.begin = joining;
    if (LegAnswers* leg = transaction_leg(shard)) {
      const bool joined = in_transaction && leg->server_status != 'I';
      if (joined) target.begin.clear();
      const bool behind = std::exchange(leg->settings_behind, false);
      server_of(*leg)->applied_state = behind && !joined ? std::string() : profile_.settings.signature();
    }
    targets->push_back(std::move(target));
  }
  LOG_DEBUG("client=c%llu a run on %zu shards with the transaction's legs%s", (unsigned long long)id(),
            targets->size(), in_transaction ? " in the client's transaction" : "");
  return Status::ok();
}

// A write's targets: those of transaction_targets, and outside a transaction (session pooling,
// or none held) each leg begins a transaction of its own, which the runner commits.
Status Session::write_targets(const std::vector<int>* shards, bool in_transaction,
                              std::vector<LegEngine::Target>* targets, std::vector<pool::Pool*>* pools) {
  if (Status error =
          transaction_targets(shards == nullptr ? every_shard() : *shards, in_transaction, targets);
      !error)
    return error;
  for (LegEngine::Target& target : *targets) {
    if (!in_transaction) target.begin = "BEGIN";
    pools->push_back(target.pool);
  }
  return Status::ok();
}

LegAnswers* Session::transaction_leg(int shard) {
  if (txn_.leg.attached() && shard_of(txn_.leg) == shard) return &txn_.leg;
  auto found = std::find_if(txn_.parked.begin(), txn_.parked.end(),
                            [this, shard](const LegAnswers& other) { return shard_of(other) == shard; });
  return found != txn_.parked.end() ? &*found : nullptr;
}

LegAnswers* Session::parked_leg(size_t slot) {
  for (LegAnswers& other : txn_.parked)
    if (other.slot == slot) return &other;
  return nullptr;
}

bool Session::leg_recorded(size_t slot) const {
  return txn_.leg.slot == slot || std::any_of(txn_.parked.begin(), txn_.parked.end(),
                                              [slot](const LegAnswers& other) { return other.slot == slot; });
}

// The transaction's answers of leg `slot` go: its server was lost, or is given back by the
// caller (before legs_ may hand the leg to another server).
void Session::drop_leg(size_t slot) {
  if (txn_.leg.slot == slot) {
    txn_.leg = LegAnswers{};
    return;
  }
  txn_.parked.erase(std::remove_if(txn_.parked.begin(), txn_.parked.end(),
                                   [slot](const LegAnswers& other) { return other.slot == slot; }),
                    txn_.parked.end());
}

// The end of a run on the transaction's legs, in place: a borrowed leg's answers stay where they
// are (settled on failure); a new leg becomes one of the transaction's (the active one when there
// is none), or is closed on failure; a borrowed leg left without a server was lost: its answers go
// (legs_ may reuse the leg) and the session ends. A new leg the run released (outside a
// transaction) comes back as none. Returns why a successful run is refused after all.
Status Session::end_run_on_legs(const std::vector<LegEngine::Handed>& handed, const Status& error,
                                bool in_transaction) {
  const RunEnd end = begin_run_end(handed, error, in_transaction);
  bool lost = false;
  for (const LegEngine::Handed& server : handed) {
    if (server.borrowed || server.backend == nullptr) {
      if (server.backend != nullptr) {
        end_borrowed_leg(server, end.failed, in_transaction);
      } else if (server.borrowed) {
        drop_leg(server.leg);
        lost = true;
      }
      continue;
    }
    if (end.failed) {
      legs_.detach(*server.backend);
      server.backend->pool().release(server.backend, false);  // closed: its transaction rolls back
      continue;
    }
    assert(!leg_recorded(server.leg));
    LegAnswers leg;
    leg.slot = server.leg;
    note_run_statement(leg, server, in_transaction);
    if (txn_.leg.attached()) {
      txn_.parked.push_back(std::move(leg));
    } else {
      txn_.leg = std::move(leg);
    }
  }
  if (in_transaction && end.failed) fail_legs_outside_run();  // the borrowed ones are settled already
  return finish_run_end(end, in_transaction, lost);
}

LegEngine::HandBack Session::hand_back_to_legs(bool in_transaction) {
  return [this, in_transaction](const std::vector<LegEngine::Handed>& handed, const Status& error) {
    return end_run_on_legs(handed, error, in_transaction);
  };
}

// A borrowed leg after the run: in the transaction now (on success), or parked until it answered
// what the run sent it, then its transaction failed (inside the client's) or rolled back.
void Session::end_borrowed_leg(const LegEngine::Handed& server, bool failed, bool in_transaction) {
  LegAnswers* leg = txn_.leg.slot == server.leg ? &txn_.leg : parked_leg(server.leg);
  if (leg == nullptr) return;
  if (!failed) {
    note_run_statement(*leg, server, in_transaction);
    return;
  }
  if (leg == &txn_.leg) {
    txn_.parked.push_back(std::exchange(txn_.leg, LegAnswers{}));
    leg = &txn_.parked.back();
  }
  settle_run_leg(*leg, server, in_transaction);
}

// A parked leg a failed run used: what the run sent it is answered first (a COPY still open gets
// CopyFail, then each ReadyForQuery still owed), then its transaction is failed (inside the
// client's) or rolled back, every answer swallowed.
void Session::settle_run_leg(LegAnswers& leg, const LegEngine::Handed& server, bool in_transaction) {
  std::string out;
  std::vector<Owed> owed(static_cast<size_t>(server.ready_owed), Owed::Query);
  if (server.copy_open) {
    wire::MessageWriter(out).begin('f').cstr("a statement of this transaction failed on another shard").end();
    owed.push_back(Owed::Query);
  }
  wire::encode_query(out, in_transaction ? kFailTransaction : "ROLLBACK");
  owed.push_back(Owed::Query);
  leg.server_status = in_transaction ? 'E' : 'I';
  send_unseen(leg, out, owed);
}

// The verdict on a run (a second written shard refused), and inside the transaction on success
// the deferred BEGIN taken and the transaction pinned, before any leg is taken back.
Session::RunEnd Session::begin_run_end(const std::vector<LegEngine::Handed>& handed, const Status& error,
                                       bool in_transaction) {
  RunEnd end;
  end.verdict = error.is_ok() && in_transaction ? refuse_writes_in_transaction(handed) : Status::ok();
  end.failed = !error.is_ok() || !end.verdict.is_ok();
  end.deferred = in_transaction && txn_.control.deferred();
  if (in_transaction && !end.failed) {
    if (end.deferred) txn_.shards.begin(txn_.control.take_begin(/*may_move=*/false));
    txn_.control.pin();
    txn_.shards.set_cross_shard_writes(cross_shard_writes());
  }
  return end;
}

// Once every leg was taken back: the transaction's status (failed, or in it), then what is
// posted (post_run_end). Returns the verdict.
Status Session::finish_run_end(const RunEnd& end, bool in_transaction, bool lost) {
  if (in_transaction) {
    if (end.failed && end.deferred) txn_.control.abort_if_deferred();
    txn_.control.on_server_status(end.failed ? 'E' : 'T');
  }
  post_run_end(end.failed, lost);
  return end.verdict;
}

void Session::note_run_statement(LegAnswers& leg, const LegEngine::Handed& server, bool in_transaction) {
  if (!in_transaction) return;
  leg.server_status = 'T';
  const std::string name = host_.directory()->shard_name(static_cast<uint16_t>(server.shard));
  if (Status noted = txn_.shards.on_statement(server.shard, server.wrote, name); !noted.is_ok())
    LOG_WARN("client=c%llu %s", (unsigned long long)id(), noted.message.c_str());  // checked before
}

// After a failed run the settling legs are read (answers may be there already); a lost server of
// the transaction ends the session.
void Session::post_run_end(bool failed, bool lost) {
  if (failed) {
    host_.loop().post([this, alive = std::weak_ptr<int>(alive_)] {
      if (alive.lock()) read_settling_legs();
    });
  }
  if (lost) {
    host_.loop().post([this, alive = std::weak_ptr<int>(alive_)] {
      if (alive.lock())
        terminate(
            Status::server("08006", "lost a server of the transaction; it was rolled back on every shard"));
    });
  }
}

// A second written shard with two-phase commit off: the same refusal a statement gets.
Status Session::refuse_writes_in_transaction(const std::vector<LegEngine::Handed>& handed) const {
  std::vector<int> writers = txn_.shards.writers();
  const CrossShardWrites policy = cross_shard_writes();
  const router::Directory& directory = *host_.directory();
  for (const LegEngine::Handed& server : handed) {
    const int shard = server.shard;
    if (!server.wrote || std::find(writers.begin(), writers.end(), shard) != writers.end()) continue;
    writers.push_back(shard);
    if (writers.size() > 1 && policy != CrossShardWrites::TwoPhase) {
      return TransactionShards::cross_shard_write(
          directory.shard_name(static_cast<uint16_t>(writers.front())),
          directory.shard_name(static_cast<uint16_t>(shard)), policy);
    }
  }
  return Status::ok();
}

// A failed run on some of the shards (a split INSERT's): the transaction's legs on the others
// (the active one parked too) get their transaction failed as well, so its COMMIT commits nowhere.
void Session::fail_legs_outside_run() {
  if (txn_.leg.attached()) {
    txn_.parked.push_back(std::move(txn_.leg));
    txn_.leg = LegAnswers{};
  }
  std::string out;
  wire::encode_query(out, kFailTransaction);
  for (LegAnswers& other : txn_.parked) {
    if (other.server_status != 'T') continue;  // not in the transaction, or failed already
    other.server_status = 'E';
    send_unseen(other, out, {Owed::Query});
  }
}

// Answers a settling leg may hold already (the runner stopped reading mid-way).
void Session::read_settling_legs() {
  std::vector<size_t> slots;
  for (const LegAnswers& other : txn_.parked) slots.push_back(other.slot);
  for (size_t slot : slots) {
    if (parked_leg(slot) != nullptr && legs_.backend(slot) != nullptr) legs_.read_pending(slot);
  }
}

}  // namespace sw::session
