// The two steps of load_string (internal to sw_config): reading with per-field checks, then
// cross-field validation and derived defaults. Both throw ConfigError.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "config/config.h"
#include "config/yaml_reader.h"

namespace sw::config::detail {

// Reads every section of `root` into `cfg`: shapes, unknown keys, ranges, choices, durations,
// sizes, DSN syntax. Records each key's line in `ctx`.
void read_document(const YAML::Node& root, LoadContext& ctx, Config& cfg);

// Checks that span fields (unique names, references between sections, TLS files) and fills
// derived defaults (default_shard, database). Relative TLS paths are resolved against `base_dir`.
void validate(Config& cfg, const LoadContext& ctx, const std::string& base_dir);

}  // namespace sw::config::detail
