#include "config/yaml_reader.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <stdexcept>

#include "config/env_expand.h"
#include "config/suggest.h"

namespace sw::config::detail {
namespace {

const char* shape_name(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return "a scalar";
    default: return "nothing";
  }
}

// Strict decimal integer: optional sign, digits, nothing else. False on overflow of int64_t.
bool parse_int64(const std::string& text, int64_t& out) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  if (i >= text.size()) return false;
  uint64_t magnitude = 0;
  for (; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return false;
    magnitude = magnitude * 10 + static_cast<uint64_t>(text[i] - '0');
    if (magnitude > (1ull << 63)) return false;
  }
  if (!negative && magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return false;
  }
  out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

std::string integer_rule(int64_t min, int64_t max) {
  if (max == std::numeric_limits<int>::max() || max == std::numeric_limits<int64_t>::max()) {
    if (min == 1) return "must be a positive integer";
    if (min == 0) return "must be a non-negative integer";
    return "must be an integer >= " + std::to_string(min);
  }
  return "must be an integer between " + std::to_string(min) + " and " + std::to_string(max);
}

}  // namespace

int line_of(const YAML::Node& node) {
  if (!node.IsDefined()) return 0;
  const YAML::Mark mark = node.Mark();
  return mark.line >= 0 ? mark.line + 1 : 0;
}

std::string quote_value(std::string_view value) {
  constexpr size_t kMax = 60;
  std::string out = "\"";
  out.append(value.substr(0, kMax));
  if (value.size() > kMax) out += "...";
  out += "\"";
  return out;
}

void LoadContext::fail(int line, const std::string& key, const std::string& message) const {
  throw ConfigError(file_, line, key, message);
}

int LoadContext::line_of(const std::string& key) const {
  auto it = lines_.find(key);
  return it == lines_.end() ? 0 : it->second;
}

MapReader::MapReader(LoadContext& ctx, const YAML::Node& node, std::string path,
                     std::initializer_list<std::string_view> allowed, int fallback_line)
    : ctx_(ctx), path_(std::move(path)), line_(detail::line_of(node)) {
  if (line_ == 0) line_ = fallback_line;
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsMap()) {
    ctx_.fail(line_, path_.empty() ? "(document)" : path_,
              std::string("must be a mapping, got ") + shape_name(node));
  }
  std::vector<std::string_view> candidates(allowed);
  for (auto it = node.begin(); it != node.end(); ++it) {
    // Copies: the iterator's pair is a temporary, references into it would dangle.
    const YAML::Node key_node = it->first;
    const YAML::Node value = it->second;
    const int key_line = detail::line_of(key_node);
    if (!key_node.IsScalar()) {
      ctx_.fail(key_line, path_.empty() ? "(document)" : path_, "keys must be plain names");
    }
    const std::string& key = key_node.Scalar();
    if (std::find(candidates.begin(), candidates.end(), key) == candidates.end()) {
      ctx_.fail(key_line, key_path(key), "unknown key" + did_you_mean(key, candidates));
    }
    if (find(key) != nullptr) {
      ctx_.fail(key_line, key_path(key),
                "duplicate key (first at line " + std::to_string(find(key)->line) + ")");
    }
    entries_.push_back(Entry{key, value, key_line});
  }
}

std::string MapReader::key_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

const MapReader::Entry* MapReader::find(std::string_view key) const {
  for (const Entry& entry : entries_) {
    if (entry.key == key) return &entry;
  }
  return nullptr;
}

YAML::Node MapReader::get(std::string_view key) const {
  const Entry* entry = find(key);
  if (entry == nullptr || entry->value.IsNull()) return YAML::Node(YAML::NodeType::Undefined);
  return entry->value;
}

void MapReader::fail(std::string_view key, const std::string& message) const {
  const Entry* entry = find(key);
  ctx_.fail(entry != nullptr ? entry->line : line_, key_path(key), message);
}

const MapReader::Entry* MapReader::read_entry(std::string_view key) {
  const Entry* entry = find(key);
  if (entry == nullptr) return nullptr;
  ctx_.record(key_path(key), entry->line);
  if (entry->value.IsNull()) return nullptr;
  return entry;
}

std::string MapReader::scalar(const Entry& entry) const {
  if (!entry.value.IsScalar()) {
    ctx_.fail(entry.line, key_path(entry.key),
              std::string("must be a single value, got ") + shape_name(entry.value));
  }
  Expanded expanded = expand_env(entry.value.Scalar());
  if (!expanded.error.empty()) ctx_.fail(entry.line, key_path(entry.key), expanded.error);
  return expanded.text;
}

bool MapReader::read_string(std::string_view key, std::string& out) {
  const Entry* entry = read_entry(key);
  if (entry == nullptr) return false;
  out = scalar(*entry);
  return true;
}

bool MapReader::read_int64(std::string_view key, int64_t& out, int64_t min, int64_t max) {
  const Entry* entry = read_entry(key);
  if (entry == nullptr) return false;
  std::string text = scalar(*entry);
  int64_t value = 0;
  if (!parse_int64(text, value) || value < min || value > max) {
    fail(key, integer_rule(min, max) + ", got " + quote_value(text));
  }
  out = value;
  return true;
}

bool MapReader::read_int(std::string_view key, int& out, int64_t min, int64_t max) {
  int64_t value = 0;
  if (!read_int64(key, value, min, std::min<int64_t>(max, std::numeric_limits<int>::max()))) {
    return false;
  }
  out = static_cast<int>(value);
  return true;
}

bool MapReader::read_duration(std::string_view key, Duration& out) {
  const Entry* entry = read_entry(key);
  if (entry == nullptr) return false;
  std::string text = scalar(*entry);
  Duration value{};
  try {
    value = parse_duration(text);
  } catch (const std::invalid_argument&) {
    fail(key, "must be a duration like \"250ms\", \"5s\", \"10m\" or \"24h\", got " + quote_value(text));
  }
  if (value.count() <= 0) fail(key, "must be greater than zero, got " + quote_value(text));
  out = value;
  return true;
}

bool MapReader::read_size(std::string_view key, uint64_t& out, uint64_t max) {
  const Entry* entry = read_entry(key);
  if (entry == nullptr) return false;
  std::string text = scalar(*entry);
  uint64_t value = 0;
  try {
    value = parse_byte_size(text);
  } catch (const std::invalid_argument&) {
    fail(key, "must be a size like \"256MB\", \"1GB\" or a number of bytes, got " + quote_value(text));
  }
  if (value == 0 || value > max) {
    fail(key, "must be between 1 byte and " + std::to_string(max >> 20) + "MB, got " + quote_value(text));
  }
  out = value;
  return true;
}

bool MapReader::read_choice(std::string_view key, std::string& out,
                            std::initializer_list<std::string_view> choices) {
  std::string value;
  if (!read_string(key, value)) return false;
  if (std::find(choices.begin(), choices.end(), value) == choices.end()) {
    std::string list;
    for (std::string_view choice : choices) list += (list.empty() ? "" : " | ") + std::string(choice);
    std::vector<std::string_view> candidates(choices);
    fail(key, "must be one of " + list + ", got " + quote_value(value) + did_you_mean(value, candidates));
  }
  out = std::move(value);
  return true;
}

bool MapReader::read_string_list(std::string_view key, std::vector<std::string>& out) {
  auto items = list(key);
  if (!has(key)) return false;
  out.clear();
  for (auto& [node, item_path] : items) {
    if (!node.IsScalar()) {
      ctx_.fail(detail::line_of(node), item_path, std::string("must be a name, got ") + shape_name(node));
    }
    ctx_.record(item_path, detail::line_of(node));
    Expanded expanded = expand_env(node.Scalar());
    if (!expanded.error.empty()) ctx_.fail(detail::line_of(node), item_path, expanded.error);
    out.push_back(std::move(expanded.text));
  }
  return true;
}

MapReader MapReader::map(std::string_view key, std::initializer_list<std::string_view> allowed) {
  const Entry* entry = read_entry(key);
  if (entry == nullptr) {
    const Entry* present = find(key);  // present but null: point at it
    return MapReader(ctx_, YAML::Node(), key_path(key), allowed, present != nullptr ? present->line : line_);
  }
  if (!entry->value.IsMap()) {
    fail(key, std::string("must be a mapping, got ") + shape_name(entry->value));
  }
  return MapReader(ctx_, entry->value, key_path(key), allowed);
}

std::vector<std::pair<YAML::Node, std::string>> MapReader::list(std::string_view key) {
  std::vector<std::pair<YAML::Node, std::string>> items;
  const Entry* entry = read_entry(key);
  if (entry == nullptr) return items;
  if (!entry->value.IsSequence()) {
    fail(key, std::string("must be a list, got ") + shape_name(entry->value));
  }
  for (size_t i = 0; i < entry->value.size(); ++i) {
    std::string item_path = key_path(key) + "[" + std::to_string(i) + "]";
    int item_line = detail::line_of(entry->value[i]);
    ctx_.record(item_path, item_line != 0 ? item_line : entry->line);
    items.emplace_back(entry->value[i], std::move(item_path));
  }
  return items;
}

}  // namespace sw::config::detail
