#include "config/suggest.h"

#include <algorithm>
#include <array>

namespace sw::config::detail {

size_t edit_distance(std::string_view a, std::string_view b) {
  constexpr size_t kMax = 64;
  if (a.size() >= kMax || b.size() >= kMax) return kMax;
  std::array<size_t, kMax> prev{}, cur{};
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
    }
    prev = cur;
  }
  return prev[b.size()];
}

std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates) {
  size_t best = 3;
  std::string_view best_word;
  for (std::string_view candidate : candidates) {
    size_t d = edit_distance(word, candidate);
    if (d < best) {
      best = d;
      best_word = candidate;
    }
  }
  if (best_word.empty()) return {};
  return " (did you mean \"" + std::string(best_word) + "\"?)";
}

}  // namespace sw::config::detail
