// The bucket of a shard key value: a literal in the SQL or a Bind parameter (text or binary).
#include "router/router_internal.h"

namespace sw::router {
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
