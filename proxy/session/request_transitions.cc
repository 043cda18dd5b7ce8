#include "session/request_transitions.h"

namespace sw::session {

const char* request_state_name(RequestState state) {
  switch (state) {
    case RequestState::Routing: return "routing";
    case RequestState::WaitingForServer: return "waiting_for_server";
    case RequestState::WaitingForCutover: return "waiting_for_cutover";
    case RequestState::Running: return "running";
    case RequestState::RetryingAfterFence: return "retrying_after_fence";
    case RequestState::Answered: return "answered";
    case RequestState::WaitingForLeg: return "waiting_for_leg";
    case RequestState::LentUntilSync: return "lent_until_sync";
  }
  return "unknown";
}

}  // namespace sw::session
