// The Bind and Parse of one shard's part of a statement split by shard (docs/architecture.md
// §5.11, §6.3).
#include "session/split_bind.h"

#include <algorithm>

#include "common/bytes.h"
#include "wire/message_writer.h"
#include "wire/messages.h"

namespace sw::session {

std::string part_bind_rest(std::string_view rest, const std::vector<int>& params) {
  auto int16_at = [&](size_t offset) -> uint16_t {
    return offset + 2 <= rest.size() ? load_be16(rest.data() + offset) : 0;
  };
  const size_t format_count = int16_at(0);
  size_t at = 2 + 2 * format_count;
  const size_t value_count = int16_at(at);
  at += 2;
  std::vector<std::string_view> values;  // each with its length word
  for (size_t i = 0; i < value_count && at + 4 <= rest.size(); ++i) {
    const auto length = static_cast<int32_t>(load_be32(rest.data() + at));
    const size_t size = 4 + (length > 0 ? static_cast<size_t>(length) : 0);
    values.push_back(rest.substr(at, size));
    at += size;
  }
  std::string out;
  if (format_count <= 1) {
    out.append(rest.substr(0, 2 + 2 * format_count));
  } else {
    append_be16(out, static_cast<uint16_t>(params.size()));
    for (int param : params) append_be16(out, int16_at(2 + 2 * static_cast<size_t>(param - 1)));
  }
  append_be16(out, static_cast<uint16_t>(params.size()));
  for (int param : params) {
    const auto index = static_cast<size_t>(param - 1);
    if (index < values.size()) out.append(values[index]);
  }
  out.append(rest.substr(std::min(at, rest.size())));  // result format codes
  return out;
}

std::string replaced_bind_rest(std::string_view rest,
                               const std::vector<merge::ShardStatement::Param>& replaced) {
  auto int16_at = [&](size_t offset) -> uint16_t {
    return offset + 2 <= rest.size() ? load_be16(rest.data() + offset) : 0;
  };
  size_t at = 2 + 2 * static_cast<size_t>(int16_at(0));
  const size_t value_count = int16_at(at);
  at += 2;
  std::string out(rest.substr(0, std::min(at, rest.size())));
  for (size_t i = 0; i < value_count && at + 4 <= rest.size(); ++i) {
    const auto length = static_cast<int32_t>(load_be32(rest.data() + at));
    const size_t size = 4 + (length > 0 ? static_cast<size_t>(length) : 0);
    const auto found = std::find_if(
        replaced.begin(), replaced.end(),
        [i](const merge::ShardStatement::Param& p) { return p.number == static_cast<int>(i) + 1; });
    if (found == replaced.end()) {
      out.append(rest.substr(at, size));
    } else if (!found->text) {
      out.append("\xff\xff\xff\xff", 4);
    } else {
      append_be32(out, static_cast<uint32_t>(found->text->size()));
      out.append(*found->text);
    }
    at += size;
  }
  out.append(rest.substr(std::min(at, rest.size())));  // result format codes, if any
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
  wire::MessageWriter(out).begin('B').cstr("").cstr("").bytes(part_bind_rest(batch.bind_rest, params)).end();
  if (batch.describe) wire::encode_target(out, 'D', 'P', "");
  wire::MessageWriter(out).begin('E').cstr("").int32(0).end();
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
