#include "session/request_transitions.h"

#include <doctest/doctest.h>

#include <string>

using sw::session::request_state_name;
using sw::session::request_transition_allowed;
using sw::session::RequestState;

namespace {

constexpr RequestState kStates[] = {
    RequestState::Routing,       RequestState::WaitingForServer,   RequestState::WaitingForCutover,
    RequestState::Running,       RequestState::RetryingAfterFence, RequestState::Answered,
    RequestState::WaitingForLeg, RequestState::LentUntilSync};

// One row per state: which states may follow it, in kStates' order
// (R = routing, W = waiting_for_server, C = waiting_for_cutover, X = running,
//  F = retrying_after_fence, A = answered, G = waiting_for_leg, L = lent_until_sync;
//  '.' = not allowed).
struct Row {
  RequestState from;
  const char* next;  // eight letters or dots
};
constexpr Row kTable[] = {
    {RequestState::Routing, "RWCX.AG."},
    {RequestState::WaitingForServer, "R....A.."},
    {RequestState::WaitingForCutover, "R......."},
    {RequestState::Running, "RW.XFAGL"},
    {RequestState::RetryingAfterFence, "R......."},
    {RequestState::Answered, "R..X.AG."},
    {RequestState::WaitingForLeg, "R......."},
    {RequestState::LentUntilSync, "R..X...."},
};

}  // namespace

TEST_CASE("request state transitions: exactly the table") {
  for (const Row& row : kTable) {
    for (size_t i = 0; i < std::size(kStates); ++i) {
      const bool expected = row.next[i] != '.';
      CAPTURE(std::string(request_state_name(row.from)) + " -> " + request_state_name(kStates[i]));
      CHECK(request_transition_allowed(row.from, kStates[i]) == expected);
    }
  }
}

TEST_CASE("request state transitions: every waiting state ends in routing, and only there or in an answer") {
  for (RequestState waiting : {RequestState::WaitingForServer, RequestState::WaitingForCutover,
                               RequestState::RetryingAfterFence, RequestState::WaitingForLeg}) {
    CAPTURE(request_state_name(waiting));
    CHECK(request_transition_allowed(waiting, RequestState::Routing));
    CHECK_FALSE(request_transition_allowed(waiting, RequestState::Running));  // routed again first
    CHECK_FALSE(request_transition_allowed(waiting, waiting));
  }
  // Only a running request meets a fence, and nothing waits for a server while it waits for a cutover.
  for (RequestState from : kStates)
    CHECK(request_transition_allowed(from, RequestState::RetryingAfterFence) ==
          (from == RequestState::Running));
  CHECK_FALSE(request_transition_allowed(RequestState::WaitingForCutover, RequestState::WaitingForServer));
}

TEST_CASE("request state transitions: a lent server and a wait for another leg") {
  // Only a request running on its server lends it (the Flush of a Parse/Describe batch).
  for (RequestState from : kStates)
    CHECK(request_transition_allowed(from, RequestState::LentUntilSync) == (from == RequestState::Running));
  // The lent server goes back (routing) or the batch pinned the client and it stays (running);
  // nothing else happens to the request meanwhile.
  CHECK(request_transition_allowed(RequestState::LentUntilSync, RequestState::Routing));
  CHECK(request_transition_allowed(RequestState::LentUntilSync, RequestState::Running));
  CHECK_FALSE(request_transition_allowed(RequestState::LentUntilSync, RequestState::WaitingForServer));
  CHECK_FALSE(request_transition_allowed(RequestState::LentUntilSync, RequestState::RetryingAfterFence));
  // A request waits for the active leg only when a leg is attached: never from a waiting state.
  for (RequestState from : {RequestState::WaitingForServer, RequestState::WaitingForCutover,
                            RequestState::RetryingAfterFence, RequestState::LentUntilSync})
    CHECK_FALSE(request_transition_allowed(from, RequestState::WaitingForLeg));
}

TEST_CASE("request state names and which states read client input") {
  std::string names;
  for (RequestState state : kStates) names += std::string(request_state_name(state)) + " ";
  CHECK(
      names ==
      "routing waiting_for_server waiting_for_cutover running retrying_after_fence answered waiting_for_leg "
      "lent_until_sync ");
  std::string reading;
  for (RequestState state : kStates) reading += sw::session::reads_client_input(state) ? 'y' : 'n';
  CHECK(reading == "ynnynynn");
}
