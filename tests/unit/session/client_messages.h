// Client messages of the extended protocol, encoded by wire's own writers, for tests that feed a
// session's batch scanners (routing_test.cc, prepare_transaction_batch_test.cc).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "wire/message_writer.h"
#include "wire/messages.h"

namespace sw::test {

inline std::string parse(std::string_view name, std::string_view query) {
  std::string out;
  wire::encode_parse(out, name, query, {});
  return out;
}

// A Bind of `statement` to the unnamed portal with text parameters and text results.
inline std::string bind(std::string_view statement, const std::vector<std::string>& values = {}) {
  std::string out;
  wire::MessageWriter writer(out);
  writer.begin('B').cstr("").cstr(statement).int16(0).int16(static_cast<uint16_t>(values.size()));
  for (const auto& value : values) writer.int32(static_cast<uint32_t>(value.size())).bytes(value);
  writer.int16(0).end();
  return out;
}

inline std::string describe(char kind, std::string_view name) {
  std::string out;
  wire::encode_target(out, 'D', kind, name);
  return out;
}

// Execute of the unnamed portal, all rows.
inline std::string execute() {
  std::string out;
  wire::MessageWriter(out).begin('E').cstr("").int32(0).end();
  return out;
}

inline std::string sync_message() {
  std::string out;
  wire::encode_sync(out);
  return out;
}

inline std::string flush_message() {
  std::string out;
  wire::MessageWriter(out).begin('H').end();
  return out;
}

}  // namespace sw::test
