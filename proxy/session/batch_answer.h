// BatchAnswer: the answers of an extended-protocol batch whose Binds went to several shards
// before one Sync (docs/architecture.md §5.11: `executemany` over tenants of several shards),
// put back in the client's order. Each unit is one client [Parse] Bind [Describe portal] Execute;
// each shard ran its units in the client's order, so unit i's answer is the next answer of part
// unit_part[i]. Pure.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace sw::session {

class BatchAnswer {
 public:
  // Answers are held until every part answered; beyond this the batch is refused.
  static constexpr size_t kMaxHeldBytes = 64u << 20;

  // Per unit, in the client's order: its part, and whether the client sent a Parse for it (its
  // ParseComplete goes first in the unit's answer; the parts' own Parse answers are not the client's).
  BatchAnswer(std::vector<int> unit_part, std::vector<bool> unit_parsed);

  // A part's answer messages to its units, whole: BindComplete starts a unit's answer,
  // RowDescription/NoData/DataRows go into it, CommandComplete ends it.
  Status on_message(size_t part, char type, std::string_view frame);
  // The answers of the units in the client's order, up to the first one that did not complete
  // (all of them when every unit completed): what the client gets before an error, or in full.
  std::string answered() const;
  bool complete() const;
  // The number of units that returned a CommandComplete whose tag counts rows (INSERT/UPDATE/
  // DELETE/MERGE n with n > 0) on the part: it wrote.
  bool wrote(size_t part) const { return part < wrote_.size() && wrote_[part]; }

 private:
  std::vector<int> unit_part_;
  std::vector<bool> unit_parsed_;
  std::vector<std::vector<std::string>> answers_;  // per part: its units' answers, in its order
  std::vector<bool> open_;                         // per part: its last answer is not complete yet
  std::vector<bool> wrote_;
  size_t held_ = 0;
};

}  // namespace sw::session
