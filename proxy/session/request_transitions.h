// Which request state may follow which (RequestState, request.h; the diagram in
// session/README.md "Request states"). The session changes its request state only through
// Session::set_request_state, which checks this table: a change the table lacks is a defect of
// the session, logged and still made, so the check never changes what a client sees. Pure.
#pragma once

#include <cstddef>
#include <cstdint>

#include "session/request.h"

namespace sw::session {
namespace detail {

constexpr uint8_t bit(RequestState state) { return static_cast<uint8_t>(1u << static_cast<unsigned>(state)); }

using S = RequestState;
// Per state, the states that may follow it (a state may also be set again: the same request goes
// on). Indexed by RequestState.
constexpr uint8_t kNextStates[] = {
    // Routing: the next request starts, needs a server or waits for a cutover, the proxy
    // answers it, or it needs another leg than the active one.
    bit(S::Routing) | bit(S::WaitingForServer) | bit(S::WaitingForCutover) | bit(S::Running) |
        bit(S::Answered) | bit(S::WaitingForLeg),
    // WaitingForServer: the pool handed a server (routed again, then run) or failed (the error
    // is the answer).
    bit(S::Routing) | bit(S::Answered),
    // WaitingForCutover: the new directory came (routed again), or the wait timed out or its
    // queue was full (routed again, answered 40001).
    bit(S::Routing),
    // Running: finished (routing the next), needs another leg's server, a runner starts on the
    // legs, a runner answered it, its shard refused it with SW001, it needs another leg, or a
    // Parse/Describe batch's Flush lent its server until the proxy's Sync.
    bit(S::Routing) | bit(S::WaitingForServer) | bit(S::Running) | bit(S::Answered) |
        bit(S::RetryingAfterFence) | bit(S::WaitingForLeg) | bit(S::LentUntilSync),
    // RetryingAfterFence: a newer directory came, the request runs again from the start.
    bit(S::Routing),
    // Answered: the next request is routed, forwarded at once, answered by the proxy too, or it
    // needs another leg.
    bit(S::Routing) | bit(S::Running) | bit(S::Answered) | bit(S::WaitingForLeg),
    // WaitingForLeg: the active leg owes nothing (or the client sent more): routed again.
    bit(S::Routing),
    // LentUntilSync: the lent server went back (routing), or the batch pinned the client and the
    // server is the session's now (running).
    bit(S::Routing) | bit(S::Running),
};

static_assert(std::size(kNextStates) == 8, "one row per RequestState");

}  // namespace detail

constexpr bool request_transition_allowed(RequestState from, RequestState to) {
  const auto index = static_cast<size_t>(from);
  return index < std::size(detail::kNextStates) && (detail::kNextStates[index] & detail::bit(to)) != 0;
}

const char* request_state_name(RequestState state);

}  // namespace sw::session
