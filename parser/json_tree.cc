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
class JsonTree::Builder {
 public:
  Builder(JsonTree& tree, std::string_view json) : tree_(tree), json_(json) { open_.reserve(32); }

  bool run() {
    if (!value(0, 0, false)) return false;
    while (!open_.empty()) {
      if (!next_in_container()) return false;
    }
    skip_space();
    return pos_ == json_.size();
  }

 private:
  struct Open {
    uint32_t node;
    uint32_t last_child;
    bool object;
    bool empty;  // no member read yet
  };

  void skip_space() {
    while (pos_ < json_.size() && is_json_space(json_[pos_])) ++pos_;
  }

  // Reads one value at pos_ (its key, if any, already read) into a new node.
  bool value(uint32_t key_offset, uint32_t key_length, bool key_extra) {
    skip_space();
    if (pos_ >= json_.size()) return false;
    Node node;
    node.key_offset = key_offset;
    node.key_length = key_length;
    if (key_extra) node.flags |= kKeyExtra;
    const char c = json_[pos_];
    if (c == '{' || c == '[') {
      node.type = c == '{' ? JsonType::Object : JsonType::Array;
      ++pos_;
    } else if (!scalar(node)) {
      return false;
    }
    add(node);
    return true;
  }

  // A string, true/false, null or number at pos_.
  bool scalar(Node& node) {
    const size_t start = pos_;
    if (json_[pos_] == '"') {
      size_t begin = 0, length = 0;
      bool escaped = false;
      if (!scan_string(json_, pos_, begin, length, escaped)) return false;
      node.type = JsonType::String;
      node.value_offset = static_cast<uint32_t>(begin);
      node.value_length = static_cast<uint32_t>(length);
      if (escaped) node.flags |= kEscaped;
      return true;
    }
    if (json_.substr(pos_, 4) == "null") {
      node.type = JsonType::Null;
      pos_ += 4;
      return true;
    }
    if (json_.substr(pos_, 4) == "true" || json_.substr(pos_, 5) == "false") {
      node.type = JsonType::Bool;
      pos_ += json_[pos_] == 't' ? 4 : 5;
    } else {
      if (!scan_number(json_, pos_)) return false;
      node.type = JsonType::Number;
    }
    node.value_offset = static_cast<uint32_t>(start);
    node.value_length = static_cast<uint32_t>(pos_ - start);
    return true;
  }

  // Appends the node as the last child of the innermost open container; opens it if it is one.
  void add(const Node& node) {
    std::vector<Node>& nodes = tree_.nodes_;
    const auto index = static_cast<uint32_t>(nodes.size());
    nodes.push_back(node);
    if (!open_.empty()) {
      Open& parent = open_.back();
      if (parent.last_child == kNone) {
        nodes[parent.node].first_child = index;
      } else {
        nodes[parent.last_child].next_sibling = index;
      }
      parent.last_child = index;
    }
    if (node.type == JsonType::Object || node.type == JsonType::Array) {
      open_.push_back({index, kNone, node.type == JsonType::Object, true});
    }
  }

  // The innermost container's closing bracket, or its next element or member.
  bool next_in_container() {
    Open& top = open_.back();
    skip_space();
    if (pos_ >= json_.size()) return false;
    if (json_[pos_] == (top.object ? '}' : ']')) {
      ++pos_;
      open_.pop_back();
      return true;
    }
    if (!top.empty) {
      if (json_[pos_] != ',') return false;
      ++pos_;
      skip_space();
    }
    top.empty = false;
    return top.object ? member() : value(0, 0, false);
  }

  // "key": value
  bool member() {
    if (pos_ >= json_.size() || json_[pos_] != '"') return false;
    size_t begin = 0, length = 0;
    bool escaped = false;
    if (!scan_string(json_, pos_, begin, length, escaped)) return false;
    skip_space();
    if (pos_ >= json_.size() || json_[pos_] != ':') return false;
    ++pos_;
    if (!escaped) return value(static_cast<uint32_t>(begin), static_cast<uint32_t>(length), false);
    std::string decoded;  // an escaped key (never produced by libpg_query): keep it decoded
    if (!JsonReader::unescape(json_.substr(begin, length), decoded)) return false;
    const auto offset = static_cast<uint32_t>(tree_.extra_.size());
    tree_.extra_.append(decoded);
    return value(offset, static_cast<uint32_t>(decoded.size()), true);
  }

  JsonTree& tree_;
  std::string_view json_;
  size_t pos_ = 0;
  std::vector<Open> open_;
};

bool JsonTree::parse(std::string_view json) {
  json_ = json;
  extra_.clear();
  nodes_.clear();
  if (json.size() >= kNone) return false;
  nodes_.reserve(json.size() / 8 + 8);  // libpg_query writes ~1 node per 11 bytes
  return Builder(*this, json).run();
}

std::vector<JsonRef> JsonTree::find_all(std::string_view key) const {
  std::vector<JsonRef> found;
  for (uint32_t i = 0; i < nodes_.size(); ++i) {
    if (key_of(nodes_[i]) == key) found.emplace_back(this, i);
  }
  return found;
}

}  // namespace sw::parser::detail
