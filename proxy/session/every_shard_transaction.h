// The name the writing runners (CopyIn, ReferenceWrite, SplitInsert) know the leg engine by
// while they move onto it (docs/architecture.md §5.6).
#pragma once

#include "session/leg_engine.h"

namespace sw::session {

using EveryShardTransaction = LegEngine;

}  // namespace sw::session
