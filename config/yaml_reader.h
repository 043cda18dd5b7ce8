// Typed, line-aware reading of yaml-cpp nodes (internal to sw_config).
//
// Every failure throws ConfigError(file, line, dotted key, message). A MapReader checks on
// construction that its node is a mapping (null counts as empty), that every key is allowed
// (unknown keys are errors, with a "did you mean") and that no key repeats; readers leave the
// output untouched when a key is absent or null, so struct defaults stand. Each key read is
// recorded with its line in the LoadContext, so later cross-field checks can point at it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "config/config.h"

namespace sw::config::detail {

// 1-based line of a node; 0 when yaml-cpp has no position for it.
int line_of(const YAML::Node& node);

class LoadContext {
 public:
  explicit LoadContext(std::string file) : file_(std::move(file)) {}
  const std::string& file() const { return file_; }
  [[noreturn]] void fail(int line, const std::string& key, const std::string& message) const;
  void record(const std::string& key, int line) { lines_[key] = line; }
  int line_of(const std::string& key) const;  // 0 when the key was never read

 private:
  std::string file_;
  std::unordered_map<std::string, int> lines_;
};

class MapReader {
 public:
  // `fallback_line` is reported for missing keys when the node itself has no position (an
  // absent or null section).
  MapReader(LoadContext& ctx, const YAML::Node& node, std::string path,
            std::initializer_list<std::string_view> allowed, int fallback_line = 0);

  LoadContext& context() const { return ctx_; }
  const std::string& path() const { return path_; }
  std::string key_path(std::string_view key) const;  // "pool" + "size" -> "pool.size"
  int line() const { return line_; }                 // line of the mapping itself
  // The value of `key`, or an undefined node when absent. Null values count as absent.
  YAML::Node get(std::string_view key) const;
  bool has(std::string_view key) const { return get(key).IsDefined(); }
  [[noreturn]] void fail(std::string_view key, const std::string& message) const;

  // Readers: absent or null keys leave `out` unchanged and return false.
  bool read_string(std::string_view key, std::string& out);
  bool read_int(std::string_view key, int& out, int64_t min, int64_t max);
  bool read_int64(std::string_view key, int64_t& out, int64_t min, int64_t max);
  bool read_duration(std::string_view key, Duration& out);            // must be > 0
  bool read_size(std::string_view key, uint64_t& out, uint64_t max);  // 1..max bytes
  bool read_choice(std::string_view key, std::string& out, std::initializer_list<std::string_view> choices);
  bool read_string_list(std::string_view key, std::vector<std::string>& out);

  MapReader map(std::string_view key, std::initializer_list<std::string_view> allowed);
  // Items of a sequence, each with its dotted path ("shards[1]"), whose line is recorded;
  // empty when absent.
  std::vector<std::pair<YAML::Node, std::string>> list(std::string_view key);

 private:
  struct Entry {
    std::string key;
    YAML::Node value;
    int line;  // line of the value (of the key when the value has none)
  };
  // The scalar text of `key`; throws if the value is a mapping or sequence.
  std::string scalar(const Entry& entry) const;
  const Entry* find(std::string_view key) const;
  const Entry* read_entry(std::string_view key);  // find + record; nullptr when absent/null

  LoadContext& ctx_;
  std::string path_;
  int line_;
  std::vector<Entry> entries_;
};

// A value quoted for an error message, cut short: "\"abc\"".
std::string quote_value(std::string_view value);

}  // namespace sw::config::detail
