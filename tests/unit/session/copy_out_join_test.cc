// CopyOutJoin: several shards' COPY ... TO STDOUT answers joined into one copy.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "session/copy_out_join.h"
#include "wire/message_writer.h"

using sw::session::CopyOutJoin;

namespace {

std::string message(char type, const std::string& body) {
  std::string out;
  sw::wire::MessageWriter(out).begin(type).bytes(body).end();
  return out;
}

// Feeds one message; returns the client's bytes.
std::string feed(CopyOutJoin& join, size_t leg, char type, const std::string& body) {
  const std::string frame = message(type, body);
  std::string out;
  sw::Status status = join.on_message(leg, type, frame, std::string_view(frame).substr(5), out);
  REQUIRE_MESSAGE(status.is_ok(), status.message);
  return out;
}

// The payloads of the CopyData messages in `bytes`, and how many CopyOutResponse / CopyDone.
struct Seen {
  std::vector<std::string> data;
  int responses = 0;
  int done = 0;
};
Seen parse(const std::string& bytes) {
  Seen seen;
  for (size_t at = 0; at + 5 <= bytes.size();) {
    const char type = bytes[at];
    const size_t length = (static_cast<size_t>(static_cast<unsigned char>(bytes[at + 1])) << 24) |
                          (static_cast<size_t>(static_cast<unsigned char>(bytes[at + 2])) << 16) |
                          (static_cast<size_t>(static_cast<unsigned char>(bytes[at + 3])) << 8) |
                          static_cast<unsigned char>(bytes[at + 4]);
    if (type == 'd') seen.data.push_back(bytes.substr(at + 5, length - 4));
    if (type == 'H') ++seen.responses;
    if (type == 'c') ++seen.done;
    at += 1 + length;
  }
  return seen;
}

const std::string kTextResponse = std::string("\0\0\1\0\0", 5);
const std::string kBinaryResponse = std::string("\1\0\1\0\1", 5);
const std::string kHeader = std::string("PGCOPY\n\377\r\n\0", 11) + std::string(8, '\0');
const std::string kTrailer = "\xff\xff";

}  // namespace

TEST_CASE("text and CSV: one CopyOutResponse, every row, one CopyDone; CSV HEADER kept once") {
  for (bool header : {false, true}) {
    CopyOutJoin join(3, header);
    std::string out;
    for (size_t leg = 0; leg < 3; ++leg) {
      out += feed(join, leg, 'H', kTextResponse);
      if (header) out += feed(join, leg, 'd', "a,b\n");
      out += feed(join, leg, 'd', std::to_string(leg) + ",x\n");
      out += feed(join, leg, 'd', std::to_string(leg) + ",y\n");
      out += feed(join, leg, 'c', "");
    }
    Seen seen = parse(out);
    CHECK(seen.responses == 1);
    CHECK(seen.done == 1);
    std::vector<std::string> want = {"0,x\n", "0,y\n", "1,x\n", "1,y\n", "2,x\n", "2,y\n"};
    if (header) want.insert(want.begin(), "a,b\n");
    CHECK(seen.data == want);
  }
}

TEST_CASE("binary: one header, every tuple, one trailer, also when a shard has no rows") {
  CopyOutJoin join(3, false);
  std::string out;
  const std::string tuple1 = std::string("\0\1\0\0\0\1A", 7), tuple2 = std::string("\0\1\0\0\0\1B", 7);
  out += feed(join, 0, 'H', kBinaryResponse);
  out += feed(join, 0, 'd', kHeader + tuple1);
  out += feed(join, 0, 'd', kTrailer);
  out += feed(join, 0, 'c', "");
  out += feed(join, 1, 'H', kBinaryResponse);
  out += feed(join, 1, 'd', kHeader + kTrailer);  // no rows: header and trailer in one message
  out += feed(join, 1, 'c', "");
  out += feed(join, 2, 'H', kBinaryResponse);
  // A header extension of 3 bytes is cut with the header.
  out += feed(join, 2, 'd',
              std::string("PGCOPY\n\377\r\n\0", 11) + std::string("\0\0\0\0\0\0\0\3xyz", 11) + tuple2);
  out += feed(join, 2, 'd', kTrailer);
  out += feed(join, 2, 'c', "");
  Seen seen = parse(out);
  CHECK(seen.responses == 1);
  CHECK(seen.done == 1);
  std::string stream;
  for (const std::string& data : seen.data) stream += data;
  CHECK(stream == kHeader + tuple1 + tuple2 + kTrailer);
}

TEST_CASE("binary streams PostgreSQL does not write and mixed formats are server faults") {
  {
    CopyOutJoin join(2, false);
    feed(join, 0, 'H', kBinaryResponse);
    feed(join, 0, 'd', kHeader + "xyz");  // no -1 trailer before CopyDone
    std::string out;
    const std::string done = message('c', "");
    sw::Status status = join.on_message(0, 'c', done, "", out);
    CHECK(status.sqlstate == "08P01");
    CHECK(status.message.find("trailer") != std::string::npos);
  }
  {
    CopyOutJoin join(2, false);
    feed(join, 0, 'H', kBinaryResponse);
    const std::string response = message('H', kTextResponse);
    std::string out;
    sw::Status status = join.on_message(1, 'H', response, kTextResponse, out);
    CHECK(status.sqlstate == "08P01");
    const std::string data = message('d', "not a header");
    CopyOutJoin other(2, false);
    feed(other, 0, 'H', kBinaryResponse);
    feed(other, 0, 'd', kHeader + kTrailer);
    feed(other, 0, 'c', "");
    feed(other, 1, 'H', kBinaryResponse);
    CHECK(other.on_message(1, 'd', data, "not a header", out).sqlstate == "08P01");
  }
}

TEST_CASE("a shard copying another column count fails the copy before its rows, naming both shards") {
  CopyOutJoin join(2, false, {"s0", "s1"});
  std::string out = feed(join, 0, 'H', kTextResponse);  // one column
  out += feed(join, 0, 'd', "a\n");
  out += feed(join, 0, 'c', "");
  const std::string two_columns = std::string("\0\0\2\0\0\0\0", 7);
  const std::string frame = message('H', two_columns);
  std::string more;
  sw::Status status = join.on_message(1, 'H', frame, std::string_view(frame).substr(5), more);
  CHECK(status.sqlstate == "42804");
  CHECK(status.message.find("shard s1 copied 2 columns where shard s0 copied 1") != std::string::npos);
  CHECK(more.empty());
}
