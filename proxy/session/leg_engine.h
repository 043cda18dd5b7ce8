// The leg engine (docs/architecture.md §5.6, "One engine for legs"): one server per target shard
// for one multi-shard run, and the only place where such a run's servers are taken, read,
// cancelled and given back. What differs between runs (relay, concatenate, merge, split answers,
// sum row counts, same answer everywhere, commit) is the Runner's answer policy on top of it.
//
// For every leg it takes a server (one per target, up front or one leg at a time, or the one its
// owner's leg holds already), brings it to the client's state (bring_server_to: its settings, no
// other client's sequence values) and begins the target's `begin` SQL; the runner appends its own
// statements to that prologue. It reads every leg's answers in one loop: each frame is checked
// against the pool's configured wire::Limits and by the leg's wire::ServerMessageCheck before the
// runner sees it; ParameterStatus and NotificationResponse are kept from the runner; a malformed,
// oversized, misplaced or refused message goes to Runner::on_leg_violation as 08P01 naming the
// shard, and that leg is read no further. It counts every leg's ReadyForQuery messages still due,
// and which of them end statements the proxy injected (the prologue's, and what the runner marks):
// the answers of those are not the client's (injected()), and a server handed back owes the rest
// (Handed::ready_owed). A runner that cannot take a message yet holds the leg
// (hold(): the message stays unread, the server's socket is not read, TCP holds the rest) and
// resumes it later: the one backpressure path.
// A borrowed leg (a leg of the client's transaction, or a session pooling server) is used at once
// and never goes back to a pool from a run (hand_over gives it back), except when the server broke
// the protocol (closed at release or hand_over: the session finds that leg lost).
// Ending: release() hands each server back to its pool, closed unless `clean` (closing rolls its
// transaction back); end() does that outside the client's transaction and hands the rest to the
// session.
// The session reads its own servers (its transaction's legs) with an engine of its own, with no
// targets: each server it takes joins as a leg (adopt) and leaves when the session gives it back
// (detach); the session is that engine's runner.
// A run on an engine's legs (the constructor with `on`) moves no server: its legs are the owner's
// Leg objects, seen through the run's own leg indices and targets. A target whose shard has an
// owner's leg holding a server is that leg (borrowed: it starts at once); any other is a free leg
// of the owner, waiting on the owner's ServerWait. Servers stay attached to the owner with the
// owner's index the whole time, and the owner forwards what concerns a leg in a run (readable,
// lost, drained, its wait's answer) to the run. The run's end (hand_over) leaves the servers where
// they are, moves the run's ReadyForQuery counts out and gives the legs back to the owner as they
// were (bare targets). A run ends before its owner is destroyed.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "pool/pool.h"
#include "session/cancel_join.h"
#include "session/server_state.h"
#include "session/server_wait.h"
#include "session/starting_reads.h"
#include "session/two_phase.h"
#include "wire/frame_reader.h"
#include "wire/messages.h"
#include "wire/server_check.h"

namespace sw::session {

class LegEngine : private pool::BackendUser {
 public:
  struct Target {
    pool::Pool* pool = nullptr;
    std::string shard;            // the shard's name, for messages
    int index = -1;               // the shard's index in the directory (the session's legs use it)
    std::string begin = "BEGIN";  // what starts the transaction ("": none, or it is in one already)
    // The runner brings the server to the client's state itself (the session's own waits): its
    // server arrives with no prologue.
    bool bare = false;
  };
  // A leg's server given back to the session at the runner's end (HandBack).
  struct Handed {
    int shard = -1;                        // the target's shard index
    size_t leg = static_cast<size_t>(-1);  // the owner's leg (a run on an engine's legs)
    pool::Backend* backend = nullptr;      // null: none (lost, never arrived, or released)
    bool borrowed = false;                 // the owner's leg before the run (not a new one)
    int ready_owed = 0;                    // ReadyForQuery still due for what was sent (expect_ready)
    bool copy_open = false;                // its COPY FROM was sent and not ended: it needs CopyFail
    bool wrote = false;                    // the runner's statement wrote there
  };
  // The runner's end, called once: the servers it gives back (by leg), and its error (ok when it
  // succeeded). The session answers ok, or why the outcome is refused after all (then the
  // runner reports that error instead).
  using HandBack = std::function<Status(std::vector<Handed> servers, const Status& error)>;
  // What a writing runner (CopyIn, ReferenceWrite, SplitInsert) calls of the session.
  struct Callbacks {
    std::function<void(std::string_view)> write_client;
    std::function<void()> done;  // the answer was written (called from a callback)
    TwoPhaseHooks two_phase;     // the session's two-phase commit
    HandBack hand_back;          // every leg the run did not release, at its end
    LegEngine* on = nullptr;     // the session's engine, whose legs the run is on (null: its own)
  };
  // One message of a leg's server that passed its checks: `frame` whole (header and body, to
  // relay as is), `body` after the header; `read`, the same message as the frame reader gave it
  // (the session hands it on as is). All point into the server's input: valid only during the
  // call.
  struct Message {
    char type;
    std::string_view frame;
    std::string_view body;
    const wire::Frame& read;
  };
  // The answer policy on the engine: what the runner is told (session/leg_runner.h).
  class Runner;

  // `what` names the runner's statement in log lines ("COPY into t").
  LegEngine(std::vector<Target> targets, ServerState session_state, std::string what, Runner& runner);
  // A run on `on`'s legs (null: legs of its own): target i is `on`'s leg on shard
  // `targets[i].index` holding a server when there is one (borrowed), else a free leg of `on`
  // (new). The run's targets say how its legs start; the owner's legs keep their own.
  LegEngine(LegEngine* on, std::vector<Target> targets, ServerState session_state, std::string what,
            Runner& runner);
  ~LegEngine() override;
  LegEngine(const LegEngine&) = delete;
  LegEngine& operator=(const LegEngine&) = delete;

  // A run that reads through the owned-rows filter routed with directory `version` (before
  // start()): it stays in `reads` until every leg has its server; expiring it there goes to
  // Runner::on_no_server. `started` (optional) says when a leg counts as started (default: it
  // has its server).
  void watch_start(StartingReads& reads, uint64_t version, std::function<bool(size_t leg)> started = nullptr);
  // Ends the watch once every leg has started (the runner calls it when `started` changes).
  void end_watch_once_started();
  // Ends the watch now (the run ended).
  void end_watch() { start_watch_.end(); }
  // Every leg gets its server: a borrowed one at once, else asked of its pool; a pool with one idle
  // answers at once (on_leg_server may run inside start()).
  void start();
  // Only leg `leg` (a run that goes shard after shard).
  void start_leg(size_t leg);
  // The session's engine: `backend`, a server the session took for the client's transaction on
  // directory shard `shard`, becomes a leg (a free one, or a new one) read by the one loop, with
  // its messages checked afresh; nothing is written to it. Returns the leg. The engine never gives
  // it back to a pool except when destroyed still holding it (the session is closing).
  size_t adopt(pool::Backend& backend, int shard) {
    const size_t held = leg_of(backend);  // a server wait_for handed to its leg is that leg's
    return held < legs_.size() ? held : adopt_free(backend, shard);
  }
  // The session gives `backend` back (to its pool, or closes it): the leg lets go of it (reading
  // resumes if the leg was held). Nothing when no leg holds it.
  void detach(const pool::Backend& backend);
  // Reads what the leg's server sent already (a server adopted with answers in its input).
  void read_pending(size_t leg) { read(leg); }
  // The session's engine: a free leg (the shard's own when free) waits for a server of `pool` for
  // client `client` (0: any), for directory shard `shard`; any other wait of the engine stops
  // first (one at a time). Returns the server when the pool had one idle, held by that leg as one
  // that comes later is (the caller adopts it, or detaches it and gives it back); else null, and
  // the server comes later to Runner::on_leg_server with an empty prologue (a bare target), held
  // by the leg, or Runner::on_no_server says why none came.
  pool::Backend* wait_for(pool::Pool& pool, int shard, uint64_t client);
  // Every leg stops waiting for its server.
  void stop_waiting();
  // The pool a leg waits for; null when none waits.
  pool::Pool* waiting_pool() const;
  size_t size() const { return legs_.size(); }
  const std::string& shard(size_t leg) const { return target(leg).shard; }
  const Target& target(size_t leg) const {
    return run_targets_.empty() ? legs_[leg]->target : run_targets_[leg];
  }
  std::vector<std::string> shard_names() const;
  // The leg's server, null before it arrived and after it was released or lost.
  pool::Backend* backend(size_t leg) const { return legs_[leg]->backend; }
  bool waiting(size_t leg) const { return legs_[leg]->waiting; }
  bool any_waiting() const;
  // The status byte of the leg's last ReadyForQuery ('I' before any).
  char status(size_t leg) const { return legs_[leg]->status; }
  // The leg whose server is `backend`, size() for none: a leg attaches its server with the leg's
  // index (Backend::user_slot) in the engine that owns it (not a run on another engine's legs).
  size_t leg_of(const pool::Backend& backend) const {
    const size_t leg = backend.user_slot();
    return leg < legs_.size() && legs_[leg]->backend == &backend ? leg : legs_.size();
  }
  // Writes to the leg's server; nothing when it has none.
  void write(size_t leg, std::string_view bytes);
  // Writes `sql` as a simple Query (the two-phase commit's Send).
  void send_query(size_t leg, const std::string& sql);
  // The leg is not read (nor its socket) until resume(); inside on_leg_message the message is
  // not taken now, and resume() presents it again.
  void hold(size_t leg);
  void resume(size_t leg);
  // Inside on_leg_message: the message presented is consumed now (a ReadyForQuery counted off
  // and its status kept, with no on_leg_ready call), and the runner may then do whatever it asks
  // for, reading included. Nothing when the leg has no message presented.
  void consume(size_t leg) {
    if (reading_ != nullptr && reading_->leg == leg && reading_->presented != nullptr)
      consume_presented(*legs_[leg], *reading_);
  }
  bool held(size_t leg) const { return legs_[leg]->held; }
  // The owner's view of its leg: in a run now; busy (in a run, owing ReadyForQuery, or held).
  bool in_run(size_t leg) const { return legs_[leg]->run != nullptr; }
  bool busy(size_t leg) const { return in_run(leg) || legs_[leg]->ready_owed > 0 || legs_[leg]->held; }
  // Sends the client's CancelRequest to the leg's server, if it has one. A cancelled server is
  // closed when released, never pooled: a cancel arriving late would hit another client's query.
  // The cancel joins `join` (the client's CancelRequest), when there is one.
  void cancel(size_t leg, CancelJoin* join = nullptr);
  // The client's CancelRequest during the run (the one cancel path, docs/architecture.md §5.6):
  // to every leg whose server runs the client's statement now (Runner::cancellable), each cancel
  // joining `join`. A cancellable leg still waiting for its server stops waiting, and the runner
  // then gets 57014 through on_no_server (which may end the run and destroy the engine: nothing
  // of it may be used after this call then). Returns how many cancels were sent.
  size_t cancel_client_statement(CancelJoin& join);
  // What the run is, for log lines ("a merged read", "COPY into t").
  const std::string& what() const { return what_; }
  bool cancelled(size_t leg) const { return legs_[leg]->cancelled; }
  // ReadyForQuery accounting. Every statement written to a leg (a simple Query, an extended
  // batch's Sync) is answered by one ReadyForQuery; each one consumed counts off. The engine
  // expects its prologue's as injected; the runner expects its own statements' (expect_ready)
  // and marks the next `count` due as injected (inject_ready) when it writes a statement whose
  // answer is not the client's, or when a statement's answer turns out to be followed by one.
  void expect_ready(size_t leg, int count) { legs_[leg]->ready_owed += count; }
  void inject_ready(size_t leg, int count) { legs_[leg]->injected += count; }
  // ReadyForQuery messages still due (a ReadyForQuery being presented to on_leg_message counts
  // until it is consumed).
  int ready_owed(size_t leg) const { return legs_[leg]->ready_owed; }
  // Whether the leg's next messages answer an injected statement (up to its ReadyForQuery, which
  // counts until it is consumed).
  bool injected(size_t leg) const { return legs_[leg]->injected > 0; }
  // The leg's server answered the runner's statement itself (the runner says when): with
  // watch_start, a leg counts as started by the runner's `started`, which may ask has_answered().
  void answered(size_t leg) {
    if (!legs_[leg]->answered) mark_answered(leg);
  }
  bool has_answered(size_t leg) const { return legs_[leg]->answered; }
  // Hands one leg's server back to its pool (closed unless `clean` and never cancelled); a
  // borrowed one is kept, unless it broke the protocol (then it is closed: the session finds
  // it lost). A run's new leg becomes a free leg of the owner.
  void release(size_t leg, bool clean);
  // Stops waiting and hands every server back; servers arriving later go back to their pools.
  void release_all(bool clean);
  // Stops waiting and detaches every server still held, by leg, for the session to take back;
  // held legs read again. A server that broke the protocol is closed instead, and handed over as
  // none (lost). A run on an engine's legs detaches nothing: it ends the run on every leg (the
  // servers stay the owner's legs', read by the owner again), and its ReadyForQuery counts go into
  // the Handed only.
  std::vector<Handed> hand_over();
  // The run's end: outside the client's transaction every new server goes back to its pool
  // (closed unless `clean`); what is left (borrowed legs, or every leg inside the transaction)
  // goes to `hand_back` by leg, completed by Runner::on_leg_handed, with the run's `error` (ok:
  // it succeeded). Returns the session's verdict.
  Status end(bool in_transaction, bool clean, const Status& error, const HandBack& hand_back);
  // end() where the session has nothing to refuse (outside a transaction, or failed): a refusal
  // is only logged.
  void end_settled(bool in_transaction, bool clean, const Status& error, const HandBack& hand_back);

  // One message of a server read against its pool's wire::Limits and checked by `check`: the one
  // limit and hostile-server check of every server that answers the client's requests (every
  // engine's legs, the session's own too). Complete: `frame` passed, still in the input (not
  // consumed); Error: `error` says what the server did wrong (an 08P01 protocol violation; no
  // message contents); NeedMore: no complete message yet. Inline, and no Status made unless a
  // check fails: it runs for every message of every server.
  static wire::FrameResult read_checked(pool::Backend& backend, wire::ServerMessageCheck& check);

  // A server's ErrorResponse body as a Status: the client's fault (its statement was refused),
  // or 08P01 when the body is malformed.
  static Status error_of(std::string_view body);

 private:
  struct Leg {
    Leg(Target to, ServerWait::Ready ready, ServerWait::Failed failed)
        : target(std::move(to)), wait(std::move(ready), std::move(failed)) {}
    Target target;
    ServerWait wait;  // for a server of the target's pool
    pool::Backend* backend = nullptr;
    bool waiting = false;      // it wants a server (asked of its pool, or about to be) and has none
    bool cancelled = false;    // a CancelRequest went to its server
    bool held = false;         // hold(): not read until resume()
    bool answered = false;     // answered(): the runner's statement was answered
    bool violated = false;     // its server broke the protocol: never kept, handed over or pooled
    bool borrowed = false;     // in a run: the owner's leg had its server before the run
    LegEngine* run = nullptr;  // an owner's leg: the run using it now
    size_t run_index = 0;      // its index in that run
    size_t slot = 0;           // its index in its owner (its server is attached with it)
    int ready_owed = 0;        // ReadyForQuery messages still due
    int injected = 0;          // of those, the next ones that end injected statements
    char status = 'I';
    wire::ServerMessageCheck check;
    Status refusal;  // why on_leg_message refused its message (Runner::refuse)
  };
  // A leg for a session's server of `pool` on directory shard `shard`: a free one (no server, no
  // wait), the shard's own first, else a new one; a bare target, its state reset.
  size_t free_leg(pool::Pool& pool, int shard);
  // A new bare leg (free_leg found none free): its index.
  size_t add_bare_leg();
  // The owner's leg on directory shard `shard` holding a server and in no run; size() for none.
  size_t leg_on_shard(int shard) const;
  // A run on the owner's legs (leg_engine_run.cc): takes its legs; ends the run on one leg.
  void join_legs(std::vector<Target> targets);
  void end_run(Leg& leg);
  // A server that broke the protocol: closed (a borrowed leg's owner finds it lost at the run's end).
  void close_violating(Leg& leg);
  // A leg this engine reads: an owner's leg in no run, or a run's leg while the run lasts.
  bool in_view(const Leg& leg) const { return leg.run == view_; }
  // The leg's target becomes `pool`'s shard.
  static void retarget(Leg& leg, pool::Pool& pool);
  // adopt() of a server no leg holds: it takes a free leg.
  size_t adopt_free(pool::Backend& backend, int shard);
  void arrived(size_t leg, pool::Backend* backend);
  // The one frame-reading loop: the leg's complete messages for the runner.
  void read(size_t leg);
  // A message the runner need not see (consumed unseen: no Runner call); false: the runner's.
  bool kept_from_runner(pool::Backend& backend, const wire::Frame& frame);
  void violation(size_t leg, const pool::Backend& backend, const Status& why);
  void mark_answered(size_t leg);
  // A ReadyForQuery of the leg was consumed: one less due.
  static void count_ready(Leg& leg) {
    if (leg.ready_owed > 0) --leg.ready_owed;
    if (leg.injected > 0) --leg.injected;
  }

  // The pool's answer to the leg's wait: its server, or why there is none.
  void on_server(size_t leg, pool::Backend* backend);
  // pool::BackendUser
  void on_backend_readable(pool::Backend& backend) override;
  void on_backend_lost(pool::Backend& backend, const Status& why) override;
  void on_backend_drained(pool::Backend& backend) override;

  std::vector<std::unique_ptr<Leg>> owned_;  // a leg's ServerWait stays where the pool knows it
  std::vector<Leg*> legs_;                   // by leg index: owned_, or the owner's (a run)
  LegEngine* owner_ = this;                  // whose legs these are (their servers' BackendUser)
  LegEngine* view_ = nullptr;                // the `run` of the legs it reads: null, or this run
  std::vector<Target> run_targets_;          // a run on the owner's legs: its targets
  ServerState session_state_;
  std::string what_;
  Runner& runner_;
  bool stopped_ = false;  // release_all ran: nobody waits for servers any more
  std::function<bool(size_t)> started_;
  StartWatch start_watch_;
  // A read() in progress (the innermost; a runner's call may read again): the destructor marks
  // every one ended, so that none touches the engine after a runner destroyed it.
  struct Reading {
    Reading(Reading*& top, size_t index) : innermost(top), outer(top), leg(index) { top = this; }
    ~Reading() {
      if (!ended) innermost = outer;
    }
    Reading(const Reading&) = delete;
    Reading& operator=(const Reading&) = delete;
    Reading*& innermost;
    Reading* outer;
    size_t leg;
    const Message* presented = nullptr;  // the message on_leg_message has, until consumed
    bool ended = false;
  };
  // Consumes the message `reading` presents: one less ReadyForQuery due for a ReadyForQuery, and
  // its status kept. Inline: it runs for every message.
  void consume_presented(Leg& leg, Reading& reading) {
    const Message& message = *std::exchange(reading.presented, nullptr);
    if (message.type == 'Z') {
      count_ready(leg);
      if (const char status = wire::ready_for_query_status(message.body)) leg.status = status;
    }
    leg.backend->connection().consume(message.frame.size());
  }
  Reading* reading_ = nullptr;
};

}  // namespace sw::session

// The runner first: the session's inline part (leg_engine_session.h) calls it.
#include "session/leg_runner.h"  // IWYU pragma: export
// Then the session's part.
#include "session/leg_engine_session.h"  // IWYU pragma: export
