// Which statements keep a client on its server in transaction pooling ("pinned"): their effect
// stays in the server's session after the transaction and the proxy cannot replay it on another
// server, so the client keeps this one until it disconnects (docs/architecture.md §5.7). Pure.
#pragma once

#include <cstdint>
#include <string_view>

#include "parser/analyze.h"

namespace sw::session {

enum class PinReason : uint8_t {
  None,
  TempTable,
  TempView,
  TempSequence,
  TempRoutine,
  TempType,
  HoldCursor,
  Library,  // LOAD: no reset undoes it either; its server is closed when released
  Listen,
  AdvisoryLock,
  ComputedSetConfig,  // set_config() whose value or is_local only the server knows
};

// The first reason `statement` pins its client for, or None.
PinReason pin_reason(const parser::StatementFacts& statement);

// What pins the client, for logs, SHOW CLIENTS and errors ("a temporary table").
std::string_view describe(PinReason reason);

}  // namespace sw::session
