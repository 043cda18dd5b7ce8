#include "session/cursor_scroll.h"

#include <algorithm>

namespace sw::session {
namespace {

constexpr int64_t kAll = CursorStatement::kAll;

// a + b, kAll past it (a >= 0; b may be negative).
int64_t saturated_add(int64_t a, int64_t b) { return b > 0 && a > kAll - b ? kAll : a + b; }

}  // namespace

int64_t CursorScroll::needed(CursorStatement::Direction direction, int64_t steps) const {
  using Direction = CursorStatement::Direction;
  switch (direction) {
    case Direction::Forward: return saturated_add(position_, steps);
    case Direction::Backward: return position_;  // every row before it was kept
    case Direction::Absolute: return steps < 0 ? kAll : steps;
    case Direction::Relative: return std::max<int64_t>(0, saturated_add(position_, steps));
  }
  return kAll;
}

Status CursorScroll::keep(std::string data_row, const std::string& cursor) {
  bytes_ += data_row.size();
  if (bytes_ > max_bytes_)
    return Status::client("54000", "SCROLL cursor \"" + cursor +
                                       "\" reads several shards and keeps the rows it returned to move "
                                       "back; they passed fanout.max_scroll_bytes (" +
                                       std::to_string(max_bytes_) +
                                       " bytes); declare it NO SCROLL, or fetch fewer rows through it");
  rows_.push_back(std::move(data_row));
  return Status::ok();
}

std::vector<int64_t> CursorScroll::move(CursorStatement::Direction direction, int64_t steps, bool ended) {
  using Direction = CursorStatement::Direction;
  const int64_t kept = this->kept();
  const int64_t after = kept + 1;  // the position past the last row, once the merge ended
  std::vector<int64_t> out;
  // ABSOLUTE and RELATIVE land on one row, or before the first, or past the last.
  auto land = [&](int64_t target) {
    if (target <= 0) {
      position_ = 0;
    } else if (target <= kept) {
      position_ = target;
      out.push_back(target - 1);
    } else {
      position_ = ended ? after : target;
    }
  };
  switch (direction) {
    case Direction::Forward: {
      const int64_t last = std::min(saturated_add(position_, steps), kept);
      for (int64_t i = position_ + 1; i <= last; ++i) out.push_back(i - 1);
      position_ = saturated_add(position_, steps) <= kept ? position_ + steps : after;
      break;
    }
    case Direction::Backward: {
      const int64_t first = steps >= position_ ? 1 : position_ - steps;
      for (int64_t i = std::min(position_ - 1, kept); i >= first; --i) out.push_back(i - 1);
      position_ = steps >= position_ ? 0 : position_ - steps;
      break;
    }
    case Direction::Absolute: land(steps >= 0 ? steps : after + steps); break;
    case Direction::Relative:
      if (steps == 0) {
        if (position_ >= 1 && position_ <= kept) out.push_back(position_ - 1);
      } else {
        land(saturated_add(position_, steps));
      }
      break;
  }
  return out;
}

}  // namespace sw::session
