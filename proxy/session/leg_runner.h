// LegEngine::Runner, the answer policy on the leg engine (docs/architecture.md §5.6): what a
// runner is told of its legs, by leg index (the targets' order), and what it may answer. Every
// multi-shard runner (Fanout, MergeFanout, CursorRound, CommitLegs, CopyIn, JointWrite's) and the
// session (the runner of its own engine) implement it. HeldLegs is what a read runner needs to run
// on the transaction's legs (keep_servers). Included by leg_engine.h only.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "session/leg_engine.h"
#include "session/server_state.h"

namespace sw::session {

// The answer policy: what the runner is told, by leg index (the targets' order). The engine
// may be destroyed by the runner inside any of these calls; it touches nothing after that.
class LegEngine::Runner {
 public:
  virtual ~Runner() = default;
  // Leg `leg` got its server. `prologue` holds the Query messages that bring it to the
  // session's settings and begin its transaction (the engine expects their ReadyForQuery
  // messages, as injected: ready_owed(leg) counts them); the runner appends its statements and
  // writes the whole with write().
  virtual void on_leg_server(size_t leg, std::string prologue) = 0;
  // A message of the leg's server, in order. True: the runner took it; it is consumed and
  // reading goes on (a ReadyForQuery then goes to on_leg_ready), unless the call held the leg
  // (the message stays unread until resume()) or consumed it itself (consume(): the runner
  // then goes on with what the message asks for). False: the runner cannot take it and said
  // why with refuse(); it is consumed, then on_leg_refused decides. When the call released or
  // handed over the leg's server, the message is left unconsumed and the leg is read no
  // further. No Status is made on the way: the call runs for every message.
  virtual bool on_leg_message(size_t leg, const Message& message) = 0;
  // A ReadyForQuery of the leg's server, consumed (and no longer counted as due).
  virtual void on_leg_ready(size_t leg) = 0;
  // Why on_leg_message refused a message (refuse()), the message consumed. True: the runner
  // has dealt with it (it ends the run with that error); false: it is the server's protocol
  // violation (on_leg_violation).
  virtual bool on_leg_refused(size_t /*leg*/, const Status& /*why*/) { return false; }
  // Every complete message of the leg was read for now (or the leg was held).
  virtual void on_leg_caught_up(size_t /*leg*/) {}
  // The leg's server broke the protocol (a malformed, oversized or misplaced message, or one
  // on_leg_message refused; logged): `why` is 08P01 "shard <name> sent an invalid message: ...".
  // Reading the leg stopped; its server is still held: the runner drops the leg or ends the run.
  virtual void on_leg_violation(size_t leg, const Status& why) = 0;
  // The leg's server is gone (already detached and released).
  virtual void on_leg_lost(size_t leg, const Status& why) = 0;
  virtual void on_leg_drained(size_t /*leg*/) {}
  // No server could be had for some leg.
  virtual void on_no_server(const Status& why) = 0;
  // The run ended (end()) with the leg's server, or none, handed over (ready_owed: the
  // engine's count): the runner adds what the session needs to take it back (copy_open, wrote;
  // ready_owed when it counts its own).
  virtual void on_leg_handed(size_t /*leg*/, Handed& /*handed*/) const {}
  // Whether ParameterStatus and NotificationResponse reach on_leg_message (the session relays
  // them to its client); default: they are kept from the runner.
  virtual bool takes_async_messages() const { return false; }
  // Whether the client's CancelRequest goes to the leg's server now (cancel_client_statement):
  // it runs the client's statement, or (a leg still waiting for its server) would run it once
  // the server came. Default: never (a run whose statements are the proxy's).
  virtual bool cancellable(size_t /*leg*/) const { return false; }

  // The engine this runner runs on, while it has one (the engine sets it): how the session
  // reaches the legs of whatever runner is in its slot.
  LegEngine* engine() const { return engine_; }

 protected:
  // on_leg_message's refusal of the leg's message: `why` goes to on_leg_refused. Returns false,
  // on_leg_message's answer.
  bool refuse(size_t leg, Status why) {
    engine_->legs_[leg]->refusal = std::move(why);
    return false;
  }
  // on_leg_message's answer from a policy that says ok or why not.
  bool took(size_t leg, Status status) { return status.is_ok() || refuse(leg, std::move(status)); }

 private:
  friend class LegEngine;
  LegEngine* engine_ = nullptr;
};

// A read runner on the session's engine (Fanout's and MergeFanout's keep_servers): its run engine
// borrows the transaction's legs, or adds legs to it for shards the transaction has none on, and
// at its end every leg it did not release goes back through `hand_back` (Session::end_run_on_legs)
// with the run's error. Not kept (`on` null): the runner's engine has legs of its own.
struct HeldLegs {
  LegEngine* on = nullptr;      // the session's engine
  bool in_transaction = false;  // inside the client's transaction block (else session pooling)
  LegEngine::HandBack hand_back;

  bool kept() const { return on != nullptr; }
  // The runner's `targets` (by leg) get the shard index and `begin` of the session's `targets`
  // for the same legs (Session::transaction_targets): what starts each leg's server.
  void keep(std::vector<LegEngine::Target>& targets, std::vector<LegEngine::Target> session_targets,
            bool transaction, LegEngine::HandBack back, LegEngine& legs) {
    for (size_t i = 0; i < targets.size() && i < session_targets.size(); ++i) {
      targets[i].index = session_targets[i].index;
      targets[i].begin = std::move(session_targets[i].begin);
    }
    on = &legs;
    in_transaction = transaction;
    hand_back = std::move(back);
  }
  // The runner's engine: a run on the session's engine when kept, else one with legs of its own.
  std::unique_ptr<LegEngine> engine(std::vector<LegEngine::Target> targets, ServerState session_state,
                                    std::string what, LegEngine::Runner& runner) const {
    return std::make_unique<LegEngine>(on, std::move(targets), std::move(session_state), std::move(what),
                                       runner);
  }
  // The run's end: its legs go back to the session, reading again, with the ReadyForQuery messages
  // they still owe. The session's answer (a refusal of the outcome) concerns writes only: a read
  // wrote nothing, so it is not read.
  void end(LegEngine& engine, const Status& error) const { (void)hand_back(engine.hand_over(), error); }
};

}  // namespace sw::session
