// An immutable tree over libpg_query's JSON parse tree (internal to sw_parser).
//
// Built iteratively (deep trees cannot exhaust the stack) from one pass of JsonReader; nodes are
// 28 bytes and refer to the JSON text by offset, so the tree costs about as much memory as the
// JSON itself and the JSON must outlive it. Strings are decoded on access.
//
// libpg_query writes a parse node as an object with one key, the node's type:
// {"A_Const": {"ival": {"ival": 5}, "location": 30}}. JsonRef::node_type() / body() read that
// shape; operator[] finds a field; iteration walks an array's elements or an object's values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sw::parser::detail {

class JsonTree;

enum class JsonType : uint8_t { Missing, Object, Array, String, Number, Bool, Null };

// A node of a JsonTree, or Missing (every accessor of a Missing ref is safe and empty).
class JsonRef {
 public:
  JsonRef() = default;
  JsonRef(const JsonTree* tree, uint32_t index) : tree_(tree), index_(index) {}

  bool valid() const { return tree_ != nullptr; }
  explicit operator bool() const { return valid(); }
  JsonType type() const;
  bool is_object() const { return type() == JsonType::Object; }
  bool is_array() const { return type() == JsonType::Array; }

  std::string_view key() const;                    // this node's key in its parent object ("" otherwise)
  JsonRef operator[](std::string_view key) const;  // field of an object; Missing if absent
  size_t size() const;                             // children of an object or array

  // The value of a scalar. string(): decoded; number()/integer(): as written / as an int
  // (0 when not a number); boolean(): false unless `true`.
  std::string string() const;
  // string() == expected, without allocating for strings that have no escapes.
  bool equals(std::string_view expected) const;
  std::string_view number() const;
  int64_t integer(int64_t missing = 0) const;
  bool boolean() const;

  // Parse-node shape: the type name of {"Type": {...}} and its body.
  std::string_view node_type() const;
  JsonRef body() const;

  class Iterator {
   public:
    Iterator(const JsonTree* tree, uint32_t index) : tree_(tree), index_(index) {}
    JsonRef operator*() const { return JsonRef(tree_, index_); }
    Iterator& operator++();
    bool operator!=(const Iterator& other) const { return index_ != other.index_; }

   private:
    const JsonTree* tree_;
    uint32_t index_;
  };
  Iterator begin() const;
  Iterator end() const;

 private:
  const JsonTree* tree_ = nullptr;
  uint32_t index_ = 0;
};

class JsonTree {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // Builds the tree; false when `json` is malformed (or over 4 GiB).
  bool parse(std::string_view json);
  JsonRef root() const { return nodes_.empty() ? JsonRef() : JsonRef(this, 0); }
  size_t node_count() const { return nodes_.size(); }

  // Every node whose key is `key`, in document order (flat scan, no recursion).
  std::vector<JsonRef> find_all(std::string_view key) const;

 private:
  friend class JsonRef;
  class Builder;  // parse(): the one-pass reader that fills nodes_
  struct Node {
    uint32_t key_offset = 0, key_length = 0;      // into json_ (or extra_ when key_extra)
    uint32_t value_offset = 0, value_length = 0;  // raw scalar text into json_
    uint32_t first_child = kNone;
    uint32_t next_sibling = kNone;
    JsonType type = JsonType::Missing;
    uint8_t flags = 0;
  };
  static constexpr uint8_t kEscaped = 1;   // the string value has escapes
  static constexpr uint8_t kKeyExtra = 2;  // the key was escaped: decoded copy in extra_

  std::string_view key_of(const Node& node) const;

  std::string_view json_;
  std::string extra_;
  std::vector<Node> nodes_;
};

}  // namespace sw::parser::detail
