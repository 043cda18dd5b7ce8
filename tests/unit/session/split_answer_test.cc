// SplitAnswer: a split INSERT's part answers combined into one, RETURNING rows in VALUES order.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "session/split_answer.h"
#include "wire/frame_reader.h"
#include "wire/message_writer.h"
#include "wire/messages.h"

using sw::session::SplitAnswer;

namespace {

std::string data_row(const std::string& value) {
  std::string out;
  sw::wire::MessageWriter(out)
      .begin('D')
      .int16(1)
      .int32(static_cast<uint32_t>(value.size()))
      .bytes(value)
      .end();
  return out;
}

std::string row_description() {
  std::string out;
  sw::wire::MessageWriter(out)
      .begin('T')
      .int16(1)
      .cstr("id")
      .int32(0)
      .int16(0)
      .int32(23)
      .int16(4)
      .int32(0xFFFFFFFFu)
      .int16(0)
      .end();
  return out;
}

// The combined answer as "T" (RowDescription), each DataRow's value and the CommandComplete tag.
std::vector<std::string> messages_of(std::string bytes) {
  std::vector<std::string> out;
  sw::wire::Limits limits;
  while (!bytes.empty()) {
    auto result = sw::wire::read_frame(bytes, sw::wire::Sender::Server, limits);
    REQUIRE(result.status == sw::wire::FrameStatus::Complete);
    const sw::wire::Frame& frame = result.frame;
    if (frame.type == 'T') out.emplace_back("T");
    if (frame.type == 'D') out.emplace_back(frame.body.substr(6));
    if (frame.type == 'C') out.emplace_back(*sw::wire::decode_command_complete(frame.body));
    bytes.erase(0, frame.size);
  }
  return out;
}

void returning(SplitAnswer& answer, size_t part, const std::vector<std::string>& values) {
  REQUIRE(answer.on_row_description(part, row_description()).is_ok());
  for (const std::string& value : values) REQUIRE(answer.on_data_row(part, data_row(value)).is_ok());
  REQUIRE(answer.on_command_complete(part, "INSERT 0 " + std::to_string(values.size())).is_ok());
}

}  // namespace

TEST_CASE("RETURNING rows come back in the order of the VALUES rows, the count summed") {
  // VALUES rows 0..4 on parts 1, 0, 1, 2, 0.
  SplitAnswer answer({1, 0, 1, 2, 0});
  returning(answer, 0, {"r1", "r4"});
  returning(answer, 1, {"r0", "r2"});
  returning(answer, 2, {"r3"});
  auto combined = answer.combine();
  REQUIRE(combined.is_ok());
  CHECK(messages_of(combined.value()) ==
        std::vector<std::string>{"T", "r0", "r1", "r2", "r3", "r4", "INSERT 0 5"});
}

TEST_CASE("without RETURNING: only the summed tag") {
  SplitAnswer answer({0, 1, 1});
  REQUIRE(answer.on_command_complete(0, "INSERT 0 1").is_ok());
  REQUIRE(answer.on_command_complete(1, "INSERT 0 2").is_ok());
  auto combined = answer.combine();
  REQUIRE(combined.is_ok());
  CHECK(messages_of(combined.value()) == std::vector<std::string>{"INSERT 0 3"});
}

TEST_CASE("a part that returned none of its rows (ON CONFLICT DO NOTHING) keeps the others in order") {
  SplitAnswer answer({0, 1, 0, 1});
  returning(answer, 0, {});
  returning(answer, 1, {"r1", "r3"});
  auto combined = answer.combine();
  REQUIRE(combined.is_ok());
  CHECK(messages_of(combined.value()) == std::vector<std::string>{"T", "r1", "r3", "INSERT 0 2"});
}

TEST_CASE("a part that returned only some of its rows cannot be put in order: 0A000") {
  SplitAnswer answer({0, 1, 0});
  returning(answer, 0, {"r0"});
  returning(answer, 1, {"r1"});
  auto combined = answer.combine();
  REQUIRE_FALSE(combined.is_ok());
  CHECK(combined.status().sqlstate == "0A000");
  CHECK(combined.status().message.find("rolled back on every shard") != std::string::npos);
}

TEST_CASE("a tag that is not an INSERT's, or a part that never completed, is refused") {
  SplitAnswer answer({0, 1});
  CHECK(answer.on_command_complete(0, "UPDATE 1").sqlstate == "08P01");
  CHECK(answer.on_command_complete(0, "INSERT 0 x").sqlstate == "08P01");
  REQUIRE(answer.on_command_complete(0, "INSERT 0 1").is_ok());
  CHECK_FALSE(answer.combine().is_ok());  // part 1 has not answered
  CHECK(answer.on_data_row(5, data_row("x")).sqlstate == "XX000");
}

TEST_CASE("row by row: each INSERT's rows are its VALUES row's, a skipped row returns none") {
  // VALUES rows 0..4 on parts 0, 1, 0, 0, 1; rows 2 and 4 skipped (ON CONFLICT DO NOTHING).
  SplitAnswer answer({0, 1, 0, 0, 1}, true);
  returning(answer, 0, {"r0"});
  returning(answer, 1, {"r1"});
  returning(answer, 0, {});
  returning(answer, 0, {"r3"});
  CHECK_FALSE(answer.combine().is_ok());  // part 1 answered one of its two rows so far
  returning(answer, 1, {});
  auto combined = answer.combine();
  REQUIRE(combined.is_ok());
  CHECK(messages_of(combined.value()) == std::vector<std::string>{"T", "r0", "r1", "r3", "INSERT 0 3"});
}
