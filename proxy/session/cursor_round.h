// One round of a cursor merged across shards (docs/architecture.md §5.6, "Cursors merged across
// shards"): what each leg is sent (simple Queries, or an extended batch ending in Sync), on the
// legs of the session's engine (a run on its legs: the transaction's servers, and new legs for
// shards it has none on), each leg read to its last ReadyForQuery. The round's answers are not the client's:
// every message of a leg's answer but ReadyForQuery, ErrorResponse and NoticeResponse goes to the owner's
// `take` (the merged cursor state), notices go to the client, and a shard's first ErrorResponse goes to the
// client once, the other legs still read to their end (no leg of the client's transaction is cancelled). At
// the end every server goes back to the session (`hand_back`, with the round's error: a failed round fails
// the client's transaction on every leg), then `done` is called with that error.
// An answer policy on the leg engine (session/leg_engine.h).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "session/leg_engine.h"

namespace sw::session {

class CursorRound : public LegEngine::Runner {
 public:
  // A message of leg `leg`'s answer (type, body); an error fails the round (it reaches the client).
  using Take = std::function<Status(size_t leg, char type, std::string_view body)>;

  // A run on `legs`, the session's engine (the transaction's legs; Session::transaction_targets
  // makes the `targets`), `messages[i]` what leg i is sent (wire messages), answered by `ready`
  // ReadyForQuery messages.
  CursorRound(LegEngine& legs, std::vector<LegEngine::Target> targets, std::vector<std::string> messages,
              int ready, ServerState session_state, std::function<void(std::string_view)> write_client,
              Take take, LegEngine::HandBack hand_back, std::function<void(const Status&)> done);
  ~CursorRound() override;
  CursorRound(const CursorRound&) = delete;
  CursorRound& operator=(const CursorRound&) = delete;

  void start();
  bool finished() const { return finished_; }
  // The client's CancelRequest: nothing is cancelled (a cancel would abort the client's
  // transaction on a shard that may have no error to report); the round is short.

 private:
  // LegEngine::Runner
  void on_leg_server(size_t leg, std::string prologue) override;
  bool on_leg_message(size_t leg, const LegEngine::Message& message) override;
  void on_leg_ready(size_t leg) override;
  bool on_leg_refused(size_t leg, const Status& why) override;
  void on_leg_violation(size_t leg, const Status& why) override;
  void on_leg_lost(size_t leg, const Status& why) override;
  void on_no_server(const Status& why) override;

  // The round's first error reaches the client (`frame`: the shard's own ErrorResponse).
  void note_error(const Status& why, std::string_view frame);
  // Every leg's last ReadyForQuery was read (the engine counts them).
  void finish_if_done();
  void finish();

  std::vector<std::string> messages_;  // by leg: what its server is sent
  int ready_ = 1;
  std::unique_ptr<LegEngine> engine_;
  std::function<void(std::string_view)> write_client_;
  Take take_;
  LegEngine::HandBack hand_back_;
  std::function<void(const Status&)> done_;
  Status error_ = Status::ok();
  bool finished_ = false;
};

}  // namespace sw::session
