#include "session/pinning.h"

#include <algorithm>

#include "session/session_state.h"

namespace sw::session {

PinReason pin_reason(const parser::StatementFacts& statement) {
  using parser::SessionObject;
  switch (statement.session_object) {
    case SessionObject::TempTable: return PinReason::TempTable;
    case SessionObject::TempView: return PinReason::TempView;
    case SessionObject::TempSequence: return PinReason::TempSequence;
    case SessionObject::TempRoutine: return PinReason::TempRoutine;
    case SessionObject::TempType: return PinReason::TempType;
    case SessionObject::HoldCursor: return PinReason::HoldCursor;
    case SessionObject::Library: return PinReason::Library;
    case SessionObject::None: break;
  }
  if (statement.kind == parser::StatementKind::Listen) return PinReason::Listen;
  if (statement.session_advisory_lock) return PinReason::AdvisoryLock;
  const bool computed = std::any_of(
      statement.set_config_calls.begin(), statement.set_config_calls.end(),
      [](const parser::SetConfigCall& call) { return set_config_effect(call) == SetConfigEffect::Unknown; });
  return computed ? PinReason::ComputedSetConfig : PinReason::None;
}

std::string_view describe(PinReason reason) {
  switch (reason) {
    case PinReason::None: return "";
    case PinReason::TempTable: return "a temporary table";
    case PinReason::TempView: return "a temporary view";
    case PinReason::TempSequence: return "a temporary sequence";
    case PinReason::TempRoutine: return "a function in pg_temp";
    case PinReason::TempType: return "a type in pg_temp";
    case PinReason::HoldCursor: return "a cursor WITH HOLD";
    case PinReason::Library: return "LOAD of a library";
    case PinReason::Listen: return "LISTEN";
    case PinReason::AdvisoryLock: return "a session-level advisory lock";
    case PinReason::ComputedSetConfig: return "set_config() with arguments that are not literals";
  }
  return "";
}

}  // namespace sw::session
