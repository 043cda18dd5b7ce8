#include "merge/binary_array.h"

#include <optional>
#include <vector>

#include "merge/binary.h"
#include "merge/value.h"

namespace sw::merge {
namespace {

constexpr size_t kMaxDimensions = 6;  // PostgreSQL's MAXDIM

void put_int32(std::string& out, int64_t value) {
  const auto v = static_cast<uint32_t>(static_cast<int32_t>(value));
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
}

bool equals_null(std::string_view s) {
  if (s.size() != 4) return false;
  const char* word = "null";
  for (size_t i = 0; i < 4; ++i) {
    if ((s[i] | 0x20) != word[i]) return false;
  }
  return true;
}

// array_out's text of a rectangular array: its dimensions, explicit lower bounds (when the text
// starts with "[lb:ub]...="), and its elements in row-major order.
class ArrayText {
 public:
  explicit ArrayText(std::string_view text) : s_(text) {}

  bool parse() {
    if (!s_.empty() && s_[0] == '[' && !parse_bounds()) return false;
    if (!parse_level(0) || pos_ != s_.size()) return false;
    if (elements_.empty()) {
      dims_.clear();
      return lbounds_.empty();
    }
    dims_.resize(*leaf_depth_ + 1);
    if (lbounds_.empty()) {
      lbounds_.assign(dims_.size(), 1);
      return true;
    }
    if (lbounds_.size() != dims_.size()) return false;
    for (size_t i = 0; i < dims_.size(); ++i) {
      if (upper_[i] - lbounds_[i] + 1 != dims_[i]) return false;
    }
    return true;
  }

  const std::vector<int64_t>& dims() const { return dims_; }
  const std::vector<int64_t>& lbounds() const { return lbounds_; }
  const std::vector<std::optional<std::string>>& elements() const { return elements_; }

 private:
  bool eat(char c) {
    if (pos_ >= s_.size() || s_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  bool read_int(int64_t& out) {
    const bool negative = eat('-');
    const size_t start = pos_;
    out = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9' && pos_ - start < 10)
      out = out * 10 + (s_[pos_++] - '0');
    if (negative) out = -out;
    return pos_ > start;
  }

  // "[lb:ub][lb:ub]=".
  bool parse_bounds() {
    while (eat('[')) {
      int64_t lower = 0, upper = 0;
      if (!read_int(lower) || !eat(':') || !read_int(upper) || !eat(']')) return false;
      lbounds_.push_back(lower);
      upper_.push_back(upper);
    }
    return eat('=') && !lbounds_.empty() && lbounds_.size() <= kMaxDimensions;
  }

  // One "{...}" at nesting `depth`: either sub-arrays or elements (the deepest level), with the
  // same count as every other "{...}" at this depth.
  bool parse_level(size_t depth) {
    if (depth >= kMaxDimensions || !eat('{')) return false;
    if (depth == 0 && eat('}')) return true;  // the empty array
    int64_t count = 0;
    do {
      ++count;
      if (pos_ < s_.size() && s_[pos_] == '{') {
        if (leaf_depth_ && *leaf_depth_ == depth) return false;
        if (!parse_level(depth + 1)) return false;
      } else {
        if (leaf_depth_ && *leaf_depth_ != depth) return false;
        leaf_depth_ = depth;
        if (!parse_element()) return false;
      }
    } while (eat(','));
    if (!eat('}')) return false;
    if (dims_[depth] < 0) dims_[depth] = count;
    return dims_[depth] == count;
  }

  bool parse_element() {
    std::string value;
    if (eat('"')) {
      while (pos_ < s_.size() && s_[pos_] != '"') {
        if (s_[pos_] == '\\' && ++pos_ == s_.size()) return false;
        value.push_back(s_[pos_++]);
      }
      if (!eat('"')) return false;
      elements_.emplace_back(std::move(value));
      return true;
    }
    const size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != ',' && s_[pos_] != '}' && s_[pos_] != '{' && s_[pos_] != '"' &&
           s_[pos_] != '\\')
      ++pos_;
    const std::string_view word = s_.substr(start, pos_ - start);
    if (word.empty()) return false;
    if (equals_null(word)) {
      elements_.emplace_back(std::nullopt);
    } else {
      elements_.emplace_back(std::string(word));
    }
    return true;
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::vector<int64_t> dims_ = std::vector<int64_t>(kMaxDimensions, -1);  // length per depth
  std::vector<int64_t> lbounds_;
  std::vector<int64_t> upper_;
  std::optional<size_t> leaf_depth_;
  std::vector<std::optional<std::string>> elements_;
};

}  // namespace

uint32_t array_element_type(uint32_t array_oid) {
  switch (array_oid) {
    case 1000: return oid::kBool;
    case 1001: return oid::kBytea;
    case 1003: return oid::kName;
    case 1005: return oid::kInt2;
    case 1007: return oid::kInt4;
    case 1009: return oid::kText;
    case 1014: return oid::kBpchar;
    case 1015: return oid::kVarchar;
    case 1016: return oid::kInt8;
    case 1021: return oid::kFloat4;
    case 1022: return oid::kFloat8;
    case 1028: return oid::kOid;
    case 1115: return oid::kTimestamp;
    case 1182: return oid::kDate;
    case 1183: return oid::kTime;
    case 1185: return oid::kTimestamptz;
    case 1187: return oid::kInterval;
    case 1231: return oid::kNumeric;
    case 2951: return oid::kUuid;
    default: return 0;
  }
}

Result<std::vector<std::optional<std::string>>> array_elements(std::string_view text) {
  ArrayText array(text);
  if (!array.parse()) return Status::server("22P02", "a shard returned an array shardwire cannot read");
  return array.elements();
}

Result<std::string> array_to_binary(uint32_t element_oid, std::string_view text) {
  ArrayText array(text);
  if (!array.parse())
    return Status::server("22P02", std::string("a shard returned a ") + type_name(element_oid) +
                                       " array shardwire cannot read");
  bool has_nulls = false;
  for (const auto& element : array.elements()) has_nulls = has_nulls || !element;
  std::string out;
  put_int32(out, static_cast<int64_t>(array.dims().size()));
  put_int32(out, has_nulls ? 1 : 0);
  put_int32(out, element_oid);
  for (size_t i = 0; i < array.dims().size(); ++i) {
    put_int32(out, array.dims()[i]);
    put_int32(out, array.lbounds()[i]);
  }
  for (const auto& element : array.elements()) {
    if (!element) {
      put_int32(out, -1);
      continue;
    }
    auto bytes = to_binary(element_oid, *element);
    if (!bytes) return bytes.status();
    put_int32(out, static_cast<int64_t>(bytes->size()));
    out.append(*bytes);
  }
  return out;
}

}  // namespace sw::merge
