// BatchAnswer: a batch's answers from several shards put back in the client's order.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "session/batch_answer.h"
#include "wire/frame_reader.h"
#include "wire/message_writer.h"
#include "wire/messages.h"

using sw::session::BatchAnswer;

namespace {

std::string message(char type, const std::string& body = {}) {
  std::string out;
  sw::wire::MessageWriter(out).begin(type).bytes(body).end();
  return out;
}

std::string complete(const std::string& tag) {
  std::string out;
  sw::wire::encode_command_complete(out, tag);
  return out;
}

// One unit's answer on `part`: BindComplete, a DataRow holding `row`, CommandComplete `tag`.
void unit(BatchAnswer& answer, size_t part, const std::string& row, const std::string& tag) {
  REQUIRE(answer.on_message(part, '2', message('2')).is_ok());
  REQUIRE(answer.on_message(part, 'D', message('D', row)).is_ok());
  REQUIRE(answer.on_message(part, 'C', complete(tag)).is_ok());
}

// The client's bytes as types and DataRow bodies: "1", "2", "D:<row>", "C:<tag>".
std::vector<std::string> seen(std::string bytes) {
  std::vector<std::string> out;
  sw::wire::Limits limits;
  while (!bytes.empty()) {
    auto result = sw::wire::read_frame(bytes, sw::wire::Sender::Server, limits);
    REQUIRE(result.status == sw::wire::FrameStatus::Complete);
    const auto& frame = result.frame;
    std::string item(1, frame.type);
    if (frame.type == 'D') (item += ':') += frame.body;
    if (frame.type == 'C') (item += ':') += *sw::wire::decode_command_complete(frame.body);
    out.push_back(item);
    bytes.erase(0, frame.size);
  }
  return out;
}

}  // namespace

TEST_CASE("units come back in the client's order whatever order the parts answered in") {
  // Units 0..3 on parts 1, 0, 1, 0; the client parsed unit 0 only.
  BatchAnswer answer({1, 0, 1, 0}, {true, false, false, false});
  unit(answer, 0, "u1", "INSERT 0 1");
  unit(answer, 0, "u3", "INSERT 0 1");
  CHECK_FALSE(answer.complete());
  CHECK(answer.answered().empty());  // unit 0 (part 1) has not answered
  unit(answer, 1, "u0", "INSERT 0 1");
  unit(answer, 1, "u2", "INSERT 0 0");
  CHECK(answer.complete());
  CHECK(seen(answer.answered()) == std::vector<std::string>{"1", "2", "D:u0", "C:INSERT 0 1", "2", "D:u1",
                                                            "C:INSERT 0 1", "2", "D:u2", "C:INSERT 0 0", "2",
                                                            "D:u3", "C:INSERT 0 1"});
  CHECK(answer.wrote(0));
  CHECK(answer.wrote(1));
}

TEST_CASE("before an error: the units up to the first one that did not complete") {
  BatchAnswer answer({0, 1, 0}, {false, false, false});
  unit(answer, 0, "u0", "INSERT 0 1");
  unit(answer, 0, "u2", "INSERT 0 1");
  REQUIRE(answer.on_message(1, '2', message('2')).is_ok());  // unit 1 failed after its BindComplete
  CHECK_FALSE(answer.complete());
  CHECK(seen(answer.answered()) == std::vector<std::string>{"2", "D:u0", "C:INSERT 0 1"});
}

TEST_CASE("a part that wrote no row is a read-only leg; messages out of order are refused") {
  BatchAnswer answer({0, 1}, {false, false});
  unit(answer, 0, "r", "SELECT 1");
  unit(answer, 1, "r", "UPDATE 0");
  CHECK_FALSE(answer.wrote(0));
  CHECK_FALSE(answer.wrote(1));
  BatchAnswer broken({0}, {false});
  CHECK(broken.on_message(0, 'D', message('D', "x")).sqlstate == "08P01");
  REQUIRE(broken.on_message(0, '2', message('2')).is_ok());
  CHECK(broken.on_message(0, '2', message('2')).sqlstate == "08P01");
  CHECK(broken.on_message(3, '2', message('2')).sqlstate == "XX000");
}
