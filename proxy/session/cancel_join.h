// The cancels one client CancelRequest sends, joined: a statement running on several servers gets
// one cancel per server, and the client's cancel connection closes only once every one of them
// was delivered (the server closed its cancel connection: PostgreSQL has signalled the backend),
// as for a statement on one server. libpq's PQcancel returns when that connection closes, so a
// client's next statement is never hit by a cancel still on its way (docs/architecture.md §4.3).
// Pure: no I/O; the callbacks run on the session's loop.
#pragma once

#include <functional>
#include <memory>
#include <utility>

namespace sw::session {

class CancelJoin {
 public:
  explicit CancelJoin(std::function<void()> all_delivered)
      : state_(std::make_shared<State>(State{1, std::move(all_delivered)})) {}
  CancelJoin(const CancelJoin&) = delete;
  CancelJoin& operator=(const CancelJoin&) = delete;
  // An unsealed join never runs `all_delivered`: seal it before it goes.
  ~CancelJoin() { seal(); }

  // The `delivered` callback of one more cancel (Pool::send_cancel); each runs at most once.
  std::function<void()> add() {
    ++state_->pending;
    return [state = state_] { finish(*state); };
  }
  // Every cancel is sent: `all_delivered` runs now when none is on its way, else with the last.
  void seal() {
    if (std::exchange(sealed_, true)) return;
    finish(*state_);
  }

 private:
  struct State {
    int pending;  // cancels on their way, plus one until sealed
    std::function<void()> all_delivered;
  };
  static void finish(State& state) {
    if (--state.pending == 0 && state.all_delivered) std::exchange(state.all_delivered, nullptr)();
  }

  std::shared_ptr<State> state_;
  bool sealed_ = false;
};

}  // namespace sw::session
