#include "session/request_transitions.h"

#include <doctest/doctest.h>

#include <string>

using sw::session::request_state_name;
using sw::session::request_transition_allowed;
using sw::session::RequestState;

namespace {

constexpr RequestState kStates[] = {
    RequestState::Routing, RequestState::WaitingForServer,   RequestState::WaitingForCutover,
    RequestState::Running, RequestState::RetryingAfterFence, RequestState::Answered};

// One row per state: which states may follow it, in kStates' order
// (R = routing, W = waiting_for_server, C = waiting_for_cutover, X = running,
//  F = retrying_after_fence, A = answered; '.' = not allowed).
struct Row {
  RequestState from;
  const char* next;  // six letters or dots
};
constexpr Row kTable[] = {
    {RequestState::Routing, "RWCX.A"},
    {RequestState::WaitingForServer, "R....A"},
    {RequestState::WaitingForCutover, "R....."},
    {RequestState::Running, "RW.XFA"},
    {RequestState::RetryingAfterFence, "R....."},
    {RequestState::Answered, "R..X.A"},
};

}  // namespace

TEST_CASE("request state transitions: exactly the table") {
  for (const Row& row : kTable) {
    for (size_t i = 0; i < 6; ++i) {
      const bool expected = row.next[i] != '.';
      CAPTURE(std::string(request_state_name(row.from)) + " -> " + request_state_name(kStates[i]));
      CHECK(request_transition_allowed(row.from, kStates[i]) == expected);
    }
  }
}

TEST_CASE("request state transitions: every waiting state ends in routing, and only there or in an answer") {
  for (RequestState waiting :
       {RequestState::WaitingForServer, RequestState::WaitingForCutover, RequestState::RetryingAfterFence}) {
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

TEST_CASE("request state names and which states read client input") {
  std::string names;
  for (RequestState state : kStates) names += std::string(request_state_name(state)) + " ";
  CHECK(names == "routing waiting_for_server waiting_for_cutover running retrying_after_fence answered ");
  std::string reading;
  for (RequestState state : kStates) reading += sw::session::reads_client_input(state) ? 'y' : 'n';
  CHECK(reading == "ynnyny");
}
