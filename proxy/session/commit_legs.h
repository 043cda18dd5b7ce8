// The two-phase commit of the client's COMMIT on the transaction's legs (docs/architecture.md
// §5.9, §5.6): an answer policy on the leg engine. The one driver (TwoPhaseLegs) sends its
// statements through the engine's legs, as a JointWrite's does through its own, and the engine's
// one frame-reading loop reads their answers: each leg's first error and its ReadyForQuery go to
// the driver, everything else is swallowed (no leg's answer is the client's). The engine is a run
// on the session's engine (its legs are the transaction's, each with its server already: no
// server is asked of a pool, none changes engine); its end (hand_over) leaves every server where
// it is, with what it still owes.
//
// What the session keeps of its own: after every event of the driver it is told (`after_event`),
// and answers the client once the driver finished; a FATAL or PANIC ErrorResponse of a leg ends
// the client's session (`fatal`), and a leg that broke the protocol terminates it (`violation`),
// as for any server of the transaction.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "session/leg_engine.h"
#include "session/server_state.h"
#include "session/two_phase.h"

namespace sw::session {

class CommitLegs final : public LegEngine::Runner {
 public:
  struct Calls {
    TwoPhaseHooks two_phase;
    TwoPhaseLegs::Finished finished;  // the driver's outcome (called inside its event)
    std::function<void()> after_event;
    // A FATAL or PANIC ErrorResponse of the leg (`frame` whole): true when it ended the client's
    // session (this object is destroyed then).
    std::function<bool(size_t leg, std::string_view frame)> fatal;
    std::function<void(size_t leg)> violation;  // the leg broke the protocol: the session ends
  };

  // A run on `legs`, the session's engine: `targets` by driver leg, each a shard on which the
  // transaction holds a server, and `bare` (the server is in the transaction with the session's
  // settings: nothing is sent before the driver's statements).
  CommitLegs(LegEngine& legs, std::string what, std::vector<LegEngine::Target> targets,
             ServerState session_state, Calls calls);
  ~CommitLegs() override;
  CommitLegs(const CommitLegs&) = delete;
  CommitLegs& operator=(const CommitLegs&) = delete;

  // Every leg starts on its server at once; the driver starts (`written`: the legs that PREPARE).
  void start(const std::vector<size_t>& written);
  // The run ends: the servers are the session's legs' again, by leg (null: lost), each with what
  // it still owes.
  std::vector<LegEngine::Handed> hand_over() { return engine_.hand_over(); }
  // The directory shard of driver leg `leg`.
  int shard_index(size_t leg) const { return engine_.target(leg).index; }
  // The transaction status of the leg's last ReadyForQuery to a statement of the driver; 0 when
  // it answered none.
  char status(size_t leg) const { return ready_seen_[leg] ? engine_.status(leg) : '\0'; }

  // LegEngine::Runner
  void on_leg_server(size_t leg, std::string prologue) override;
  bool on_leg_message(size_t leg, const LegEngine::Message& message) override;
  void on_leg_ready(size_t leg) override;
  void on_leg_violation(size_t leg, const Status& why) override;
  void on_leg_lost(size_t leg, const Status& why) override;
  void on_no_server(const Status& why) override;

 private:
  void after_event();

  LegEngine engine_;
  Calls calls_;
  TwoPhaseLegs driver_;
  std::vector<bool> ready_seen_;  // per leg: it answered a statement of the driver
};

}  // namespace sw::session
