// Frame reader: split offsets, byte-at-a-time feeding, every limit at limit and limit+1,
// absurd lengths, length < 4, unknown client types, and startup-phase packets.
#include "wire/frame_reader.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "common/bytes.h"

namespace sw::wire {
namespace {

struct Expected {
  char type;
  std::string body;
};

// type + int32 length (counting itself) + body, built by hand so the test does not depend on
// MessageWriter.
std::string typed(char type, const std::string& body) {
  std::string out(1, type);
  append_be32(out, static_cast<uint32_t>(body.size() + 4));
  return out + body;
}

// Just the 5-byte header announcing `length`.
std::string header(char type, uint32_t length) {
  std::string out(1, type);
  append_be32(out, length);
  return out;
}

std::string untyped(const std::string& body) {
  std::string out;
  append_be32(out, static_cast<uint32_t>(body.size() + 4));
  return out + body;
}

std::string cat(const std::vector<Expected>& frames) {
  std::string out;
  for (const auto& f : frames) out += typed(f.type, f.body);
  return out;
}

using namespace std::string_literals;

// A realistic extended-protocol exchange from the client ...
const std::vector<Expected> kClientStream = {
    {'Q', "SELECT 1\0"s},
    {'P', "s1\0SELECT * FROM orders WHERE tenant_id = $1\0\0\1\0\0\0\x14"s},
    {'B',
     "\0s1\0\0\0\0\1\0\0\0\x02"s
     "42\0\0"s},
    {'D', "P\0"s},
    {'E', "\0\0\0\0\0"s},
    {'S', ""},
    {'d', std::string(300, 'x')},
    {'c', ""},
    {'X', ""},
};

// ... and from the server (type bytes a client could never send, like 'Z' and 'T').
const std::vector<Expected> kServerStream = {
    {'R', "\0\0\0\0"s},
    {'S', "client_encoding\0UTF8\0"s},
    {'K', "\0\0\x30\x39\x12\x34\x56\x78"s},
    {'Z', "I"},
    {'1', ""},
    {'T', "\0\1id\0\0\0\0\0\0\1\0\0\0\x14\0\x08\xff\xff\xff\xff\0\0"s},
    {'D',
     "\0\1\0\0\0\x01"
     "7"s},
    {'C', "SELECT 1\0"s},
    {'E', "SERROR\0C42P01\0Mrelation does not exist\0\0"s},
};

// Reads every complete frame from the front of `input`; checks them against `expected` starting
// at `next`, and checks the NeedMore answer for the incomplete tail.
void drain(std::string_view input, Sender sender, const std::vector<Expected>& expected, size_t& next) {
  Limits limits;
  for (;;) {
    FrameResult r = read_frame(input, sender, limits);
    REQUIRE(r.status != FrameStatus::Error);
    if (r.status == FrameStatus::NeedMore) {
      REQUIRE(next < expected.size());
      const size_t want = input.size() < 5 ? 5 : expected[next].body.size() + 5;
      CHECK(r.need == want);
      CHECK(r.need > input.size());
      return;
    }
    REQUIRE(next < expected.size());
    CHECK(r.frame.type == expected[next].type);
    CHECK(r.frame.body == expected[next].body);
    CHECK(r.frame.size == expected[next].body.size() + 5);
    input.remove_prefix(r.frame.size);
    ++next;
    if (next == expected.size()) {
      CHECK(input.empty());
      return;
    }
  }
}

void check_every_split(const std::vector<Expected>& frames, Sender sender) {
  const std::string stream = cat(frames);
  // Frame i is complete in a prefix of length k iff k >= end[i].
  std::vector<size_t> ends;
  size_t end = 0;
  for (const auto& f : frames) ends.push_back(end += f.body.size() + 5);

  for (size_t k = 0; k <= stream.size(); ++k) {
    CAPTURE(k);
    // Exact-size heap copy so ASan sees any read past the prefix.
    std::vector<char> prefix(stream.begin(), stream.begin() + static_cast<std::ptrdiff_t>(k));
    size_t next = 0;
    drain(std::string_view(prefix.data(), prefix.size()), sender, frames, next);
    size_t complete = 0;
    while (complete < ends.size() && ends[complete] <= k) ++complete;
    CHECK(next == complete);
  }
}

void check_byte_at_a_time(const std::vector<Expected>& frames, Sender sender) {
  const std::string stream = cat(frames);
  std::string buffer;
  size_t next = 0;
  for (char byte : stream) {
    buffer.push_back(byte);
    const size_t before = next;
    drain(buffer, sender, frames, next);
    // Drop what was consumed, as a connection's read buffer would.
    size_t consumed = 0;
    for (size_t i = before; i < next; ++i) consumed += frames[i].body.size() + 5;
    buffer.erase(0, consumed);
  }
  CHECK(next == frames.size());
  CHECK(buffer.empty());
}

FrameResult client(const std::string& input, Limits limits = {}) {
  return read_frame(input, Sender::Client, limits);
}

FrameResult server(const std::string& input, Limits limits = {}) {
  return read_frame(input, Sender::Server, limits);
}

}  // namespace

TEST_CASE("read_frame: client stream split at every offset") {
  check_every_split(kClientStream, Sender::Client);
}

TEST_CASE("read_frame: server stream split at every offset") {
  check_every_split(kServerStream, Sender::Server);
}

TEST_CASE("read_frame: streams fed one byte at a time") {
  check_byte_at_a_time(kClientStream, Sender::Client);
  check_byte_at_a_time(kServerStream, Sender::Server);
}

TEST_CASE("read_frame: need is 5 until the header is complete, then 1 + length") {
  const std::string frame = typed('Q', "SELECT 1\0"s);
  for (size_t k = 0; k < 5; ++k) CHECK(client(frame.substr(0, k)).need == 5);
  for (size_t k = 5; k < frame.size(); ++k) {
    const FrameResult r = client(frame.substr(0, k));
    CHECK(r.status == FrameStatus::NeedMore);
    CHECK(r.need == frame.size());
  }
  CHECK(client(frame).status == FrameStatus::Complete);
  // Bytes of the next frame do not belong to this one.
  const std::string with_next = frame + "S";
  const FrameResult r = client(with_next);
  CHECK(r.status == FrameStatus::Complete);
  CHECK(r.frame.size == frame.size());
}

TEST_CASE("read_frame: small client messages at limit and limit + 1") {
  for (char type : {'S', 'H', 'X', 'C', 'D', 'c', 'f'}) {
    CAPTURE(type);
    const std::string at_limit = typed(type, std::string(Limits::kMaxSmallMessage - 4, 'a'));
    const FrameResult ok = client(at_limit);
    CHECK(ok.status == FrameStatus::Complete);
    CHECK(ok.frame.size == Limits::kMaxSmallMessage + 1);
    // Over the limit: an error from the header alone, before any body byte.
    const FrameResult over = client(header(type, Limits::kMaxSmallMessage + 1));
    CHECK(over.status == FrameStatus::Error);
    // A server may send the same type byte with a large body ('D' DataRow, 'C' ...).
    CHECK(server(header(type, Limits::kMaxSmallMessage + 1)).status == FrameStatus::NeedMore);
  }
}

TEST_CASE("read_frame: large client messages at the configured limit and limit + 1") {
  Limits limits;
  limits.max_message_size = 20000;
  for (char type : {'Q', 'P', 'B', 'E', 'F', 'd', 'p'}) {
    CAPTURE(type);
    const FrameResult ok = client(typed(type, std::string(20000 - 4, 'a')), limits);
    CHECK(ok.status == FrameStatus::Complete);
    CHECK(ok.frame.body.size() == 20000 - 4);
    CHECK(client(header(type, 20001), limits).status == FrameStatus::Error);
    // Larger than the small limit is fine for these types.
    CHECK(client(header(type, 10001), limits).status == FrameStatus::NeedMore);
  }
}

TEST_CASE("read_frame: default 256 MiB limit, client and server") {
  const uint32_t limit = 256u << 20;
  for (Sender sender : {Sender::Client, Sender::Server}) {
    const FrameResult at = read_frame(header('d', limit), sender, Limits{});
    CHECK(at.status == FrameStatus::NeedMore);
    CHECK(at.need == uint64_t{limit} + 1);
    CHECK(read_frame(header('d', limit + 1), sender, Limits{}).status == FrameStatus::Error);
  }
}

TEST_CASE("read_frame: server frames at the configured limit and limit + 1") {
  Limits limits;
  limits.max_message_size = 64;
  CHECK(server(typed('D', std::string(60, 'r')), limits).status == FrameStatus::Complete);
  CHECK(server(header('D', 65), limits).status == FrameStatus::Error);
}

TEST_CASE("read_frame: absurd lengths are errors at once, never NeedMore") {
  Limits unlimited;
  unlimited.max_message_size = UINT64_MAX;  // even then the int32 bound holds
  for (uint32_t length : {0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu}) {
    CAPTURE(length);
    CHECK(client(header('Q', length)).status == FrameStatus::Error);
    CHECK(server(header('D', length)).status == FrameStatus::Error);
    // Past INT32_MAX the length word is negative on the wire: an error whatever the limit.
    if (length > 0x7fffffffu) {
      CHECK(server(header('D', length), unlimited).status == FrameStatus::Error);
    }
  }
  const FrameResult int32_max = server(header('D', 0x7fffffff), unlimited);
  CHECK(int32_max.status == FrameStatus::NeedMore);
  CHECK(int32_max.need == 0x80000000ull);
  CHECK(client(header('Q', 0x7fffffff)).error ==
        "invalid message length 2147483647 for message type 'Q' (limit 268435456)");
}

TEST_CASE("read_frame: length word below 4 is an error, 4 is an empty body") {
  for (uint32_t length : {0u, 1u, 2u, 3u}) {
    CAPTURE(length);
    CHECK(client(header('S', length)).status == FrameStatus::Error);
    CHECK(server(header('Z', length)).status == FrameStatus::Error);
  }
  CHECK(client(header('Q', 3)).error == "invalid message length 3 for message type 'Q' (minimum 4)");
  const FrameResult empty = client(header('S', 4));
  CHECK(empty.status == FrameStatus::Complete);
  CHECK(empty.frame.body.empty());
  CHECK(empty.frame.size == 5);
}

TEST_CASE("read_frame: unknown client type byte is an error from the first byte") {
  for (char type : {'Z', 'T', 'x', '\0', '\xff', 'R', 'K'}) {
    CAPTURE(type);
    const FrameResult r = client(std::string(1, type));
    CHECK(r.status == FrameStatus::Error);
    CHECK(r.error.find("invalid frontend message type") != std::string::npos);
    CHECK(server(typed(type, "")).status == FrameStatus::Complete);
  }
  CHECK(client("\x01"s).error == "invalid frontend message type 0x01");
}

TEST_CASE("read_startup_packet: need, bounds and split offsets") {
  const std::string packet = untyped("\0\3\0\0user\0app\0\0"s);
  for (size_t k = 0; k < 4; ++k) CHECK(read_startup_packet(packet.substr(0, k)).need == 4);
  for (size_t k = 4; k < packet.size(); ++k) {
    const FrameResult r = read_startup_packet(packet.substr(0, k));
    CHECK(r.status == FrameStatus::NeedMore);
    CHECK(r.need == packet.size());
  }
  const std::string with_next = packet + "Q";  // views in the result point into it
  const FrameResult r = read_startup_packet(with_next);
  REQUIRE(r.status == FrameStatus::Complete);
  CHECK(r.frame.type == 0);
  CHECK(r.frame.size == packet.size());
  CHECK(r.frame.body == packet.substr(4));

  auto length_only = [](uint32_t length) {
    std::string out;
    append_be32(out, length);
    return out;
  };
  for (uint32_t bad : {0u, 3u, 4u, 7u, 10001u, 0x7fffffffu, 0xffffffffu}) {
    CAPTURE(bad);
    CHECK(read_startup_packet(length_only(bad)).status == FrameStatus::Error);
  }
  CHECK(read_startup_packet(length_only(8)).need == 8);
  CHECK(read_startup_packet(length_only(10000)).need == 10000);
  const std::string max_packet = untyped(std::string(10000 - 4, 'a'));
  CHECK(read_startup_packet(max_packet).status == FrameStatus::Complete);
}

TEST_CASE("peek_frame: type and whole size from the header alone, at every split of a stream") {
  const std::string stream = typed('B', std::string(20, 'b')) + typed('E', "x") + typed('S', "");
  const std::vector<std::pair<char, uint64_t>> frames = {{'B', 25}, {'E', 6}, {'S', 5}};
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    CAPTURE(cut);
    const std::string_view input = std::string_view(stream).substr(0, cut);
    size_t offset = 0;
    for (const auto& expected : frames) {
      const FramePeek peek = peek_frame(input.substr(offset));
      CHECK_FALSE(peek.malformed);
      if (input.size() - offset < 5) {
        CHECK(peek.size == 0);  // the header is not all there
        break;
      }
      CHECK(peek.type == expected.first);
      CHECK(peek.size == expected.second);
      if (input.size() - offset < peek.size) break;  // the body is still coming
      // Where read_frame agrees.
      const FrameResult read = read_frame(input.substr(offset), Sender::Client, Limits{});
      REQUIRE(read.status == FrameStatus::Complete);
      CHECK(read.frame.size == peek.size);
      offset += static_cast<size_t>(peek.size);
    }
  }
  // A length word below 4 is malformed; a length over read_frame's limits is only a size.
  CHECK(peek_frame(header('E', 3)).malformed);
  const FramePeek huge = peek_frame(header('S', 0x7fffffffu));
  CHECK_FALSE(huge.malformed);
  CHECK(huge.size == 0x80000000u);
}

}  // namespace sw::wire
