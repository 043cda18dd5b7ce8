// Bind parameters: decoding a Bind message's values and hashing key values.
#include <cstring>

#include "router/router_internal.h"

namespace sw::router {
namespace {

class Cursor {
 public:
  explicit Cursor(std::string_view data) : data_(data) {}
  bool int16(int16_t& out) {
    if (data_.size() - pos_ < 2) return false;
    const auto* p = reinterpret_cast<const unsigned char*>(data_.data() + pos_);
    out = static_cast<int16_t>((p[0] << 8) | p[1]);
    pos_ += 2;
    return true;
  }
  bool int32(int32_t& out) {
    if (data_.size() - pos_ < 4) return false;
    const auto* p = reinterpret_cast<const unsigned char*>(data_.data() + pos_);
    out = static_cast<int32_t>((uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) |
                               uint32_t{p[3]});
    pos_ += 4;
    return true;
  }
  bool bytes(size_t n, std::string_view& out) {
    if (data_.size() - pos_ < n) return false;
    out = data_.substr(pos_, n);
    pos_ += n;
    return true;
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

Status malformed(const std::string& what) {
  return Status::client("08P01", "malformed Bind message: " + what);
}

Result<BindValues> decode(std::string_view rest, std::vector<uint32_t> param_types);

}  // namespace

Result<BindValues> decode_bind_values(std::string_view rest, std::vector<uint32_t> param_types) {
  try {
    return decode(rest, std::move(param_types));
  } catch (...) {  // allocation failure
    return Status::proxy("53200", "out of memory while decoding Bind parameters");
  }
}

namespace {

Result<BindValues> decode(std::string_view rest, std::vector<uint32_t> param_types) {
  Cursor in(rest);
  int16_t format_count = 0;
  if (!in.int16(format_count) || format_count < 0) return malformed("parameter format codes");
  std::vector<int16_t> formats(static_cast<size_t>(format_count));
  for (int16_t& format : formats) {
    if (!in.int16(format)) return malformed("parameter format codes");
  }
  int16_t param_count = 0;
  if (!in.int16(param_count) || param_count < 0) return malformed("parameter count");
  if (format_count > 1 && format_count != param_count) {
    return malformed("format code count does not match the parameter count");
  }
  BindValues values;
  values.types = std::move(param_types);
  values.params.resize(static_cast<size_t>(param_count));
  for (int16_t i = 0; i < param_count; ++i) {
    BindParam& param = values.params[static_cast<size_t>(i)];
    const int16_t format = format_count == 0 ? 0 : formats[format_count == 1 ? 0 : i];
    // Checked where PostgreSQL checks it (exec_bind_message), with its error: a format code is
    // well-formed structure (wire::decode_bind accepts it), only an unusable value.
    if (format != 0 && format != 1) {
      return Status::client("22023", "unsupported format code: " + std::to_string(format));
    }
    param.binary = format == 1;
    int32_t length = 0;
    if (!in.int32(length) || length < -1) return malformed("parameter length");
    if (length == -1) {
      param.null = true;
    } else if (!in.bytes(static_cast<size_t>(length), param.bytes)) {
      return malformed("parameter value");
    }
  }
  return values;  // result format codes follow; routing does not need them
}

}  // namespace

namespace detail {
namespace {

int family(KeyType type) {
  switch (type) {
    case KeyType::Int2:
    case KeyType::Int4:
    case KeyType::Int8: return 0;
    case KeyType::Text: return 1;
    case KeyType::Uuid: return 2;
  }
  return -1;
}

// Prefixes a value error with the key it was meant for; the value itself is never echoed.
KeyBucket failed(const Status& status, const TableRule& rule) {
  KeyBucket out;
  out.outcome = KeyOutcome::Error;
  out.error = status;
  out.error.message =
      "invalid value for shard key " + rule.key + " of " + rule.config_name + ": " + status.message;
  return out;
}

KeyBucket from(Result<uint32_t> bucket, const TableRule& rule) {
  if (!bucket.is_ok()) return failed(bucket.status(), rule);
  KeyBucket out;
  out.outcome = KeyOutcome::Bucket;
  out.bucket = bucket.value();
  return out;
}

}  // namespace

bool same_hash_family(KeyType a, KeyType b) { return family(a) == family(b); }

KeyBucket key_bucket(const parser::Value& value, const TableRule& rule, const BindValues* params,
                     uint32_t bucket_count) {
  using parser::ValueKind;
  KeyBucket out;
  switch (value.kind) {
    case ValueKind::String:
    case ValueKind::Number:
    case ValueKind::Bool: return from(bucket_of_text_value(rule.key_type, value.text, bucket_count), rule);
    case ValueKind::Null: out.outcome = KeyOutcome::Null; return out;
    case ValueKind::Column:
    case ValueKind::Other: return out;
    case ValueKind::Param: break;
  }
  if (params == nullptr) {
    out.outcome = KeyOutcome::NeedsBind;
    return out;
  }
  const auto index = static_cast<size_t>(value.param - 1);
  if (value.param < 1 || index >= params->params.size()) {
    out.outcome = KeyOutcome::Error;
    out.error =
        Status::client("08P01", "bind message supplies " + std::to_string(params->params.size()) +
                                    " parameters, but the statement uses $" + std::to_string(value.param));
    return out;
  }
  const BindParam& param = params->params[index];
  if (param.null) {
    out.outcome = KeyOutcome::Null;
    return out;
  }
  if (!param.binary) return from(bucket_of_text_value(rule.key_type, param.bytes, bucket_count), rule);

  // Binary: the bytes are in the parameter's own type.
  KeyType type = rule.key_type;
  const uint32_t oid = index < params->types.size() ? params->types[index] : 0;
  if (oid != 0) {
    Result<KeyType> declared = key_type_from_oid(oid);
    if (!declared.is_ok()) return failed(declared.status(), rule);
    type = declared.value();
  } else if (!value.cast.empty()) {
    if (Result<KeyType> cast = key_type_from_name(value.cast); cast.is_ok()) type = cast.value();
  }
  if (!same_hash_family(type, rule.key_type)) {
    out.outcome = KeyOutcome::Error;
    out.error = Status::client("0A000", "parameter $" + std::to_string(value.param) + " is " +
                                            key_type_name(type) + " but shard key " + rule.key + " of " +
                                            rule.config_name + " is " + key_type_name(rule.key_type));
    return out;
  }
  return from(bucket_of_binary_value(type, param.bytes, bucket_count), rule);
}

}  // namespace detail
}  // namespace sw::router
