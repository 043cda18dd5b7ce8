// Fuzz target: the config loader (YAML text -> validated Config), as `shardwire --config` and
// RELOAD run it.
//
// Input: the text of a config file. load_string() parses it with yaml-cpp and validates it.
//
// Invariants: loading either succeeds or throws ConfigError (config.h: "Loading is the one place
// that throws: a ConfigError names the file, line and key"); any other exception escaping, e.g.
// a yaml-cpp or std::invalid_argument one, would reach RELOAD's caller without a file:line:key,
// so it is reported as a crash. A config that loads is self-consistent: settings() lists keys
// once each, and loading the same text again gives a config diff() finds no change in.
#include <set>
#include <string>
#include <string_view>

#include "config/config.h"
#include "fuzz_check.h"

namespace {

constexpr const char* kFileName = "fuzz.yaml";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  sw::config::Config config;
  try {
    config = sw::config::load_string(text, kFileName);
  } catch (const sw::config::ConfigError& e) {
    FUZZ_CHECK(e.file() == kFileName);
    FUZZ_CHECK(e.line() >= 0);
    FUZZ_CHECK(std::string_view(e.what()).rfind(kFileName, 0) == 0);
    return 0;
  }
  std::set<std::string> keys;
  for (const sw::config::Setting& setting : sw::config::settings(config)) {
    FUZZ_CHECK(!setting.key.empty());
    FUZZ_CHECK(keys.insert(setting.key).second);
  }
  const sw::config::Config again = sw::config::load_string(text, kFileName);
  const sw::config::ConfigDiff diff = sw::config::diff(config, again);
  FUZZ_CHECK(diff.changed.empty() && diff.need_restart.empty());
  return 0;
}
