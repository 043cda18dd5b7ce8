// ${NAME} in config values: replaced by the environment variable NAME when the file is loaded
// (and at each RELOAD), so secrets can come from the environment (a Kubernetes Secret, a
// systemd credential) instead of the file. "$${" writes a literal "${". Internal to sw_config.
#pragma once

#include <string>

namespace sw::config::detail {

struct Expanded {
  std::string text;
  std::string error;  // non-empty when a reference cannot be expanded; names the variable, never a value
};

// `lookup` returns the variable's value, or nullptr when it is not set (getenv by default).
Expanded expand_env(const std::string& text, const char* (*lookup)(const char*) = nullptr);

}  // namespace sw::config::detail
