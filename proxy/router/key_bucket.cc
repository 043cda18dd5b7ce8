// The bucket of a shard key value: a literal in the SQL or a Bind parameter (text or binary).
#include "router/key_literal.h"
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

bool is_int_key(KeyType type) {
  return type == KeyType::Int2 || type == KeyType::Int4 || type == KeyType::Int8;
}

// An integer key's bucket from a literal or a parameter's value of a type key_literal.h reads;
// `done` false when it reads another type (the caller hashes the text as the key's type).
KeyBucket int_key_bucket(const parser::Value& value, const TableRule& rule, const BindParam* param,
                         uint32_t param_oid, uint32_t bucket_count, const KeyComparison* compared,
                         bool& done) {
  std::string scratch;
  done = true;
  auto literal = read_literal(value, param, param_oid, scratch);
  if (!literal) return failed(literal.status(), rule);
  if (literal->type == LiteralType::Other || bucket_count == 0) {
    done = false;
    return KeyBucket{};
  }
  KeyBucket out;
  if (compared == nullptr) {
    auto key = assigned_key(literal.value(), rule.key_type);
    if (!key) return failed(key.status(), rule);
    out.outcome = KeyOutcome::Bucket;
    out.bucket = bucket_of_hash(hash_int8(key.value()), bucket_count);
    return out;
  }
  auto key = compared_key(literal.value(), *compared, rule.key_type);
  if (!key) return failed(key.status(), rule);
  switch (key->outcome) {
    case IntKeyOutcome::Value:
      out.outcome = KeyOutcome::Bucket;
      out.bucket = bucket_of_hash(hash_int8(key->value), bucket_count);
      break;
    case IntKeyOutcome::NoRow: out.outcome = KeyOutcome::Null; break;
    case IntKeyOutcome::Undecidable: out.outcome = KeyOutcome::Undecidable; break;
  }
  return out;
}

}  // namespace

KeyComparison key_comparison(const std::vector<parser::Value>& values, const TableRule& rule,
                             const BindValues* params) {
  KeyComparison comparison = key_comparison(rule.key_type);
  if (!is_int_key(rule.key_type)) return comparison;
  std::string scratch;
  for (const parser::Value& value : values) {
    const BindParam* param = nullptr;
    uint32_t oid = 0;
    if (value.kind == parser::ValueKind::Param) {
      const auto index = static_cast<size_t>(value.param - 1);
      if (params == nullptr || value.param < 1 || index >= params->params.size() ||
          params->params[index].null)
        continue;
      param = &params->params[index];
      oid = index < params->types.size() ? params->types[index] : 0;
    }
    if (auto literal = read_literal(value, param, oid, scratch); literal.is_ok())
      widen(comparison, literal.value());
  }
  return comparison;
}

bool same_hash_family(KeyType a, KeyType b) { return family(a) == family(b); }

KeyBucket key_bucket(const parser::Value& value, const TableRule& rule, const BindValues* params,
                     uint32_t bucket_count, const KeyComparison* compared) {
  using parser::ValueKind;
  KeyBucket out;
  bool done = false;
  switch (value.kind) {
    case ValueKind::String:
    case ValueKind::Number:
      if (is_int_key(rule.key_type)) {
        out = int_key_bucket(value, rule, nullptr, 0, bucket_count, compared, done);
        if (done) return out;
      }
      [[fallthrough]];
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
  if (is_int_key(rule.key_type)) {
    const uint32_t oid = index < params->types.size() ? params->types[index] : 0;
    out = int_key_bucket(value, rule, &param, oid, bucket_count, compared, done);
    if (done) return out;
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
