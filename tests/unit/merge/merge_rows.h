// Rows for the merge module's unit tests: shard rows written as C strings, nullptr for NULL.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>

#include "merge/merger.h"

namespace sw::merge::test {

inline std::optional<std::string> opt(const char* v) { return std::optional<std::string>(v); }

inline Row row(std::initializer_list<const char*> values) {
  Row r;
  for (const char* v : values) r.emplace_back(v == nullptr ? std::nullopt : opt(v));
  return r;
}

}  // namespace sw::merge::test
