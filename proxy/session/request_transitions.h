// Which request state may follow which (RequestState, request.h; the diagram in
// session/README.md "Request states"). The session changes its request state only through
// Session::set_request_state, which checks this table: a change the table lacks is a defect of
// the session, logged and still made, so the check never changes what a client sees. Pure.
#pragma once

#include "session/request.h"

namespace sw::session {

bool request_transition_allowed(RequestState from, RequestState to);
const char* request_state_name(RequestState state);

}  // namespace sw::session
