// "Did you mean" hints for misspelt keys and keywords (internal to sw_config).
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace sw::config::detail {

// Levenshtein distance; words of 64 characters or more count as far from everything.
size_t edit_distance(std::string_view a, std::string_view b);

// " (did you mean \"x\"?)" for the closest candidate within distance 2 (ties: first listed),
// or "" when nothing is close.
std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates);

}  // namespace sw::config::detail
