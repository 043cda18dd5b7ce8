#include "parser/json_tree.h"

#include <charconv>

#include "parser/json_reader.h"

namespace sw::parser::detail {

// ---- JsonRef -----------------------------------------------------------------------------------

JsonType JsonRef::type() const {
  return tree_ ? tree_->nodes_[index_].type : JsonType::Missing;
}

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

bool JsonTree::parse(std::string_view json) {
  json_ = json;
  extra_.clear();
  nodes_.clear();
  if (json.size() >= kNone) return false;
  JsonReader reader(json);

  struct Open {
    uint32_t node;
    uint32_t last_child;
  };
  std::vector<Open> open;

  // Adds a node for the value at the reader's position (after its key, if any).
  auto add_value = [&](std::string_view key) -> bool {
    Node node;
    if (!key.empty()) {
      int64_t offset = reader.offset_of(key);
      if (offset < 0) {  // an escaped key: keep a decoded copy
        node.flags |= kKeyExtra;
        offset = static_cast<int64_t>(extra_.size());
        extra_.append(key);
      }
      node.key_offset = static_cast<uint32_t>(offset);
      node.key_length = static_cast<uint32_t>(key.size());
    }
    const char c = reader.peek();
    std::string_view text;
    bool escaped = false;
    bool container = false;
    switch (c) {
      case '{':
        if (!reader.begin_object()) return false;
        node.type = JsonType::Object;
        container = true;
        break;
      case '[':
        if (!reader.begin_array()) return false;
        node.type = JsonType::Array;
        container = true;
        break;
      case '"':
        if (!reader.read_raw_string(text, escaped)) return false;
        node.type = JsonType::String;
        if (escaped) node.flags |= kEscaped;
        break;
      case 't':
      case 'f': {
        bool value = false;
        if (!reader.read_bool(value)) return false;
        node.type = JsonType::Bool;
        text = value ? "true" : "false";
        node.value_length = static_cast<uint32_t>(text.size());
        text = {};
        break;
      }
      case 'n':
        if (!reader.read_null()) return false;
        node.type = JsonType::Null;
        break;
      default:
        if (!reader.read_number(text)) return false;
        node.type = JsonType::Number;
        break;
    }
    if (!text.empty() || node.type == JsonType::String) {
      node.value_offset = static_cast<uint32_t>(reader.offset_of(text) < 0 ? 0 : reader.offset_of(text));
      node.value_length = static_cast<uint32_t>(text.size());
    }
    const uint32_t index = static_cast<uint32_t>(nodes_.size());
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
    if (container) open.push_back({index, kNone});
    return true;
  };

  if (!add_value({})) return false;
  while (!open.empty()) {
    const bool object = nodes_[open.back().node].type == JsonType::Object;
    if (object) {
      std::string_view key;
      if (reader.next_key(key)) {
        if (!add_value(key)) return false;
        continue;
      }
    } else if (reader.next_element()) {
      if (!add_value({})) return false;
      continue;
    }
    if (!reader.ok()) return false;
    open.pop_back();
  }
  return reader.ok() && reader.peek() == 0;
}

std::vector<JsonRef> JsonTree::find_all(std::string_view key) const {
  std::vector<JsonRef> found;
  for (uint32_t i = 0; i < nodes_.size(); ++i) {
    if (key_of(nodes_[i]) == key) found.emplace_back(this, i);
  }
  return found;
}

}  // namespace sw::parser::detail
