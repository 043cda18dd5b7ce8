// The Bind and Parse of one shard's part of a statement split by shard (docs/architecture.md
// §5.11, §6.3).
#include "session/split_bind.h"

#include <utility>

#include "wire/bind_rest.h"
#include "wire/messages.h"

namespace sw::session {

std::string part_bind_rest(std::string_view rest, const std::vector<int>& params) {
  auto bind = wire::decode_bind_rest(rest);
  if (!bind) return std::string(rest);  // unreachable: decode_bind checked it
  wire::BindRest part;
  part.result_formats = std::move(bind->result_formats);
  if (bind->param_formats.size() == 1) part.param_formats = bind->param_formats;
  for (int param : params) {
    const auto index = static_cast<size_t>(param - 1);
    if (index >= bind->values.size()) continue;  // not a parameter of this Bind (the contract's)
    if (bind->param_formats.size() > 1) part.param_formats.push_back(bind->param_formats[index]);
    part.values.push_back(bind->values[index]);
  }
  std::string out;
  wire::encode_bind_rest(out, part);
  return out;
}

std::string replaced_bind_rest(std::string_view rest,
                               const std::vector<merge::ShardStatement::Param>& replaced) {
  auto bind = wire::decode_bind_rest(rest);
  const bool with_results = bind.is_ok();
  if (!with_results) bind = wire::decode_bind_parameters(rest);
  if (!bind) return std::string(rest);  // unreachable: decode_bind checked it
  for (const merge::ShardStatement::Param& param : replaced) {
    const auto index = static_cast<size_t>(param.number - 1);
    if (index >= bind->values.size()) continue;
    bind->values[index] = param.text ? std::optional<std::string_view>(*param.text) : std::nullopt;
  }
  std::string out;
  if (with_results) {
    wire::encode_bind_rest(out, *bind);
  } else {
    wire::encode_bind_parameters(out, *bind);
  }
  return out;
}

std::vector<uint32_t> part_parse_types(const std::vector<uint32_t>& types, const std::vector<int>& params) {
  std::vector<uint32_t> out;
  for (int param : params) {
    const auto index = static_cast<size_t>(param - 1);
    out.push_back(index < types.size() ? types[index] : 0);
  }
  while (!out.empty() && out.back() == 0) out.pop_back();
  return out;
}

namespace {

// One INSERT of a part as Parse/Bind/[Describe portal]/Execute of the unnamed statement.
void append_execution(std::string& out, const std::string& sql, const std::vector<int>& params,
                      const SplitBatch& batch) {
  wire::encode_parse(out, "", sql, part_parse_types(batch.types, params));
  wire::encode_bind(out, "", "", part_bind_rest(batch.bind_rest, params));
  if (batch.describe) wire::encode_target(out, 'D', 'P', "");
  wire::encode_execute(out, "", 0);
}

}  // namespace

std::string part_request(const std::string& sql, const std::vector<int>& params, const SplitBatch* batch) {
  std::string out;
  if (batch == nullptr) {
    wire::encode_query(out, sql);
    return out;
  }
  append_execution(out, sql, params, *batch);
  wire::encode_sync(out);
  return out;
}

std::string part_rows_request(const std::vector<parser::InsertRows>& statements, const SplitBatch& batch) {
  std::string out;
  for (const parser::InsertRows& statement : statements)
    append_execution(out, statement.sql, statement.params, batch);
  wire::encode_sync(out);
  return out;
}

}  // namespace sw::session
