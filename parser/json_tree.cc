#include "parser/json_tree.h"

#include <charconv>

#include "parser/json_reader.h"  // unescape

namespace sw::parser::detail {

// ---- JsonRef -----------------------------------------------------------------------------------

JsonType JsonRef::type() const { return tree_ ? tree_->nodes_[index_].type : JsonType::Missing; }

std::string_view JsonRef::key() const {
  return tree_ ? tree_->key_of(tree_->nodes_[index_]) : std::string_view();
}

JsonRef JsonRef::operator[](std::string_view key) const {
  if (type() != JsonType::Object) return {};
  for (uint32_t i = tree_->nodes_[index_].first_child; i != JsonTree::kNone;
       i = tree_->nodes_[i].next_sibling) {
    if (tree_->key_of(tree_->nodes_[i]) == key) return JsonRef(tree_, i);
  }
  return {};
}

size_t JsonRef::size() const {
  size_t n = 0;
  for (JsonRef child : *this) {
    (void)child;
    ++n;
  }
  return n;
}

std::string JsonRef::string() const {
  if (type() != JsonType::String) return {};
  const JsonTree::Node& node = tree_->nodes_[index_];
  std::string_view raw = tree_->json_.substr(node.value_offset, node.value_length);
  if ((node.flags & JsonTree::kEscaped) == 0) return std::string(raw);
  std::string out;
  JsonReader::unescape(raw, out);  // checked when the tree was built
  return out;
}

bool JsonRef::equals(std::string_view expected) const {
  if (type() != JsonType::String) return false;
  const JsonTree::Node& node = tree_->nodes_[index_];
  if ((node.flags & JsonTree::kEscaped) != 0) return string() == expected;
  return tree_->json_.substr(node.value_offset, node.value_length) == expected;
}

std::string_view JsonRef::number() const {
  if (type() != JsonType::Number) return {};
  const JsonTree::Node& node = tree_->nodes_[index_];
  return tree_->json_.substr(node.value_offset, node.value_length);
}

int64_t JsonRef::integer(int64_t missing) const {
  std::string_view text = number();
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return missing;
  return value;
}

bool JsonRef::boolean() const {
  return type() == JsonType::Bool && tree_->nodes_[index_].value_length == 4;  // "true"
}

std::string_view JsonRef::node_type() const {
  if (type() != JsonType::Object) return {};
  uint32_t child = tree_->nodes_[index_].first_child;
  return child == JsonTree::kNone ? std::string_view() : tree_->key_of(tree_->nodes_[child]);
}

JsonRef JsonRef::body() const {
  if (type() != JsonType::Object) return {};
  uint32_t child = tree_->nodes_[index_].first_child;
  return child == JsonTree::kNone ? JsonRef() : JsonRef(tree_, child);
}

JsonRef::Iterator& JsonRef::Iterator::operator++() {
  index_ = tree_->nodes_[index_].next_sibling;
  return *this;
}

JsonRef::Iterator JsonRef::begin() const {
  JsonType t = type();
  if (t != JsonType::Object && t != JsonType::Array) return end();
  return Iterator(tree_, tree_->nodes_[index_].first_child);
}

JsonRef::Iterator JsonRef::end() const { return Iterator(tree_, JsonTree::kNone); }

// ---- JsonTree ----------------------------------------------------------------------------------

std::string_view JsonTree::key_of(const Node& node) const {
  std::string_view base = (node.flags & kKeyExtra) ? std::string_view(extra_) : json_;
  return base.substr(node.key_offset, node.key_length);
}

namespace {

bool is_json_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }
bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Scans a string token at json[pos] == '"'; leaves pos after the closing quote. Escapes are
// checked for shape here and decoded on access.
bool scan_string(std::string_view json, size_t& pos, size_t& begin, size_t& length, bool& escaped) {
  begin = ++pos;
  escaped = false;
  while (pos < json.size()) {
    const char c = json[pos];
    if (c == '"') {
      length = pos - begin;
      ++pos;
      return true;
    }
    if (static_cast<unsigned char>(c) < 0x20) return false;
    if (c == '\\') {
      escaped = true;
      if (++pos >= json.size()) return false;
      const char e = json[pos];
      if (e == 'u') {
        if (pos + 4 >= json.size()) return false;
        for (int k = 1; k <= 4; ++k) {
          if (!is_hex(json[pos + static_cast<size_t>(k)])) return false;
        }
        pos += 4;
      } else if (e != '"' && e != '\\' && e != '/' && e != 'b' && e != 'f' && e != 'n' && e != 'r' &&
                 e != 't') {
        return false;
      }
    }
    ++pos;
  }
  return false;
}

bool scan_number(std::string_view json, size_t& pos) {
  auto digits = [&] {
    const size_t from = pos;
    while (pos < json.size() && json[pos] >= '0' && json[pos] <= '9') ++pos;
    return pos > from;
  };
  if (pos < json.size() && json[pos] == '-') ++pos;
  if (!digits()) return false;
  if (pos < json.size() && json[pos] == '.') {
    ++pos;
    if (!digits()) return false;
  }
  if (pos < json.size() && (json[pos] == 'e' || json[pos] == 'E')) {
    ++pos;
    if (pos < json.size() && (json[pos] == '+' || json[pos] == '-')) ++pos;
    if (!digits()) return false;
  }
  return true;
}

}  // namespace

// One pass, iterative: a stack of open containers; each value becomes a node linked to its
// parent's last child.
bool JsonTree::parse(std::string_view json) {
  json_ = json;
  extra_.clear();
  nodes_.clear();
  if (json.size() >= kNone) return false;
  nodes_.reserve(json.size() / 8 + 8);  // libpg_query writes ~1 node per 11 bytes

  struct Open {
    uint32_t node;
    uint32_t last_child;
    bool object;
    bool empty;  // no member read yet
  };
  std::vector<Open> open;
  open.reserve(32);
  size_t pos = 0;
  auto skip_space = [&] {
    while (pos < json.size() && is_json_space(json[pos])) ++pos;
  };

  // Reads one value at pos (its key, if any, already read) into a new node.
  auto value = [&](uint32_t key_offset, uint32_t key_length, bool key_extra) -> bool {
    skip_space();
    if (pos >= json.size()) return false;
    Node node;
    node.key_offset = key_offset;
    node.key_length = key_length;
    if (key_extra) node.flags |= kKeyExtra;
    const char c = json[pos];
    const size_t start = pos;
    bool container = false;
    if (c == '{' || c == '[') {
      node.type = c == '{' ? JsonType::Object : JsonType::Array;
      container = true;
      ++pos;
    } else if (c == '"') {
      size_t begin = 0, length = 0;
      bool escaped = false;
      if (!scan_string(json, pos, begin, length, escaped)) return false;
      node.type = JsonType::String;
      node.value_offset = static_cast<uint32_t>(begin);
      node.value_length = static_cast<uint32_t>(length);
      if (escaped) node.flags |= kEscaped;
    } else if (json.substr(pos, 4) == "true" || json.substr(pos, 5) == "false") {
      node.type = JsonType::Bool;
      pos += json[pos] == 't' ? 4 : 5;
      node.value_offset = static_cast<uint32_t>(start);
      node.value_length = static_cast<uint32_t>(pos - start);
    } else if (json.substr(pos, 4) == "null") {
      node.type = JsonType::Null;
      pos += 4;
    } else {
      if (!scan_number(json, pos)) return false;
      node.type = JsonType::Number;
      node.value_offset = static_cast<uint32_t>(start);
      node.value_length = static_cast<uint32_t>(pos - start);
    }
    const auto index = static_cast<uint32_t>(nodes_.size());
    nodes_.push_back(node);
    if (!open.empty()) {
      Open& parent = open.back();
      if (parent.last_child == kNone) {
        nodes_[parent.node].first_child = index;
      } else {
        nodes_[parent.last_child].next_sibling = index;
      }
      parent.last_child = index;
    }
    if (container) open.push_back({index, kNone, node.type == JsonType::Object, true});
    return true;
  };

  if (!value(0, 0, false)) return false;
  while (!open.empty()) {
    Open& top = open.back();
    skip_space();
    if (pos >= json.size()) return false;
    const char close = top.object ? '}' : ']';
    if (json[pos] == close) {
      ++pos;
      open.pop_back();
      continue;
    }
    if (!top.empty) {
      if (json[pos] != ',') return false;
      ++pos;
      skip_space();
    }
    top.empty = false;
    if (!top.object) {
      if (!value(0, 0, false)) return false;
      continue;
    }
    if (pos >= json.size() || json[pos] != '"') return false;
    size_t begin = 0, length = 0;
    bool escaped = false;
    if (!scan_string(json, pos, begin, length, escaped)) return false;
    skip_space();
    if (pos >= json.size() || json[pos] != ':') return false;
    ++pos;
    if (!escaped) {
      if (!value(static_cast<uint32_t>(begin), static_cast<uint32_t>(length), false)) return false;
      continue;
    }
    std::string decoded;  // an escaped key (never produced by libpg_query): keep it decoded
    if (!JsonReader::unescape(json.substr(begin, length), decoded)) return false;
    const auto offset = static_cast<uint32_t>(extra_.size());
    extra_.append(decoded);
    if (!value(offset, static_cast<uint32_t>(decoded.size()), true)) return false;
  }
  skip_space();
  return pos == json.size();
}

std::vector<JsonRef> JsonTree::find_all(std::string_view key) const {
  std::vector<JsonRef> found;
  for (uint32_t i = 0; i < nodes_.size(); ++i) {
    if (key_of(nodes_[i]) == key) found.emplace_back(this, i);
  }
  return found;
}

}  // namespace sw::parser::detail
