#include "session/request_transitions.h"

#include <array>
#include <cstddef>

namespace sw::session {
namespace {

constexpr size_t kStates = 6;
constexpr size_t index(RequestState state) { return static_cast<size_t>(state); }

struct Transition {
  RequestState from;
  RequestState to;
};

using S = RequestState;
// Every change the session makes (a state may also be set again: the same request goes on).
constexpr Transition kTransitions[] = {
    // Routing: the next request starts, needs a server or waits for a cutover, or the proxy answers it.
    {S::Routing, S::Routing},
    {S::Routing, S::WaitingForServer},
    {S::Routing, S::WaitingForCutover},
    {S::Routing, S::Running},
    {S::Routing, S::Answered},
    // The pool handed a server (routed again, then run) or failed (the error is the answer).
    {S::WaitingForServer, S::Routing},
    {S::WaitingForServer, S::Answered},
    // The new directory came (routed again), or the wait timed out / the queue was full.
    {S::WaitingForCutover, S::Routing},
    // Running: finished (routing the next), needs another leg's server, a runner starts on the
    // legs, a runner answered it, or its shard refused it with SW001.
    {S::Running, S::Routing},
    {S::Running, S::WaitingForServer},
    {S::Running, S::Running},
    {S::Running, S::Answered},
    {S::Running, S::RetryingAfterFence},
    // A newer directory came: the request runs again from the start.
    {S::RetryingAfterFence, S::Routing},
    // Answered: the next request is routed, forwarded at once, or answered by the proxy too.
    {S::Answered, S::Routing},
    {S::Answered, S::Running},
    {S::Answered, S::Answered},
};

constexpr auto kAllowed = [] {
  std::array<std::array<bool, kStates>, kStates> allowed{};
  for (const Transition& t : kTransitions) allowed[index(t.from)][index(t.to)] = true;
  return allowed;
}();

}  // namespace

bool request_transition_allowed(RequestState from, RequestState to) {
  return index(from) < kStates && index(to) < kStates && kAllowed[index(from)][index(to)];
}

const char* request_state_name(RequestState state) {
  switch (state) {
    case S::Routing: return "routing";
    case S::WaitingForServer: return "waiting_for_server";
    case S::WaitingForCutover: return "waiting_for_cutover";
    case S::Running: return "running";
    case S::RetryingAfterFence: return "retrying_after_fence";
    case S::Answered: return "answered";
  }
  return "unknown";
}

}  // namespace sw::session
