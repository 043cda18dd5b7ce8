// MessageWriter: length back-patching, byte order, limits at limit and limit + 1, sticky failure
// and misuse.
#include "wire/message_writer.h"

#include <doctest/doctest.h>

#include <string>

#include "wire/frame_reader.h"

namespace sw::wire {
namespace {
using namespace std::string_literals;
}  // namespace

TEST_CASE("MessageWriter: typed message with back-patched length") {
  std::string out;
  MessageWriter w(out);
  w.begin('Q').cstr("SELECT 1").end();
  CHECK(w.ok());
  CHECK(out == "Q\0\0\0\x0dSELECT 1\0"s);
}

TEST_CASE("MessageWriter: empty typed message has length 4") {
  std::string out;
  MessageWriter(out).begin('S').end();
  CHECK(out == "S\0\0\0\4"s);
}

TEST_CASE("MessageWriter: untyped packet length counts itself") {
  std::string out;
  MessageWriter w(out);
  w.begin_untyped().int32(80877103).end();
  CHECK(w.ok());
  CHECK(out == "\0\0\0\x08\x04\xd2\x16\x2f"s);
}

TEST_CASE("MessageWriter: integers are big-endian, bytes are raw") {
  std::string out;
  MessageWriter w(out);
  w.begin('x').int8(0xab).int16(0x0102).int32(0x03040506).bytes("z\0y"s).end();
  CHECK(w.ok());
  CHECK(out == "x\0\0\0\x0e\xab\x01\x02\x03\x04\x05\x06z\0y"s);
}

TEST_CASE("MessageWriter: several messages appended after existing bytes") {
  std::string out = "prefix";
  MessageWriter w(out);
  w.begin('S').end().begin('H').end().begin('Q').cstr("").end();
  CHECK(w.ok());
  CHECK(out == "prefixS\0\0\0\4H\0\0\0\4Q\0\0\0\5\0"s);
}

TEST_CASE("MessageWriter: limit is the length word; limit passes, limit + 1 fails") {
  SUBCASE("at limit") {
    std::string out;
    MessageWriter w(out, 10);
    w.begin('d').bytes("123456").end();  // length 4 + 6 = 10
    CHECK(w.ok());
    CHECK(out.size() == 11);
  }
  SUBCASE("limit + 1, the failing message is removed, earlier ones stay") {
    std::string out;
    MessageWriter w(out, 10);
    w.begin('S').end();
    w.begin('d').bytes("1234").bytes("567").end();  // would be 11
    CHECK_FALSE(w.ok());
    CHECK(out == "S\0\0\0\4"s);
  }
  SUBCASE("limit + 1 through cstr, int8, int16 and int32") {
    for (int field = 0; field < 4; ++field) {
      CAPTURE(field);
      std::string out;
      MessageWriter w(out, 8);
      w.begin('x').bytes("abc");  // length 7 so far
      if (field == 0) w.cstr("a");
      if (field == 1) w.int8(1).int8(1);
      if (field == 2) w.int16(1);
      if (field == 3) w.int32(1);
      w.end();
      CHECK_FALSE(w.ok());
      CHECK(out.empty());
    }
  }
  SUBCASE("untyped packets obey the limit too") {
    std::string out = "keep";
    MessageWriter w(out, 8);
    w.begin_untyped().int32(1).int8(0).end();
    CHECK_FALSE(w.ok());
    CHECK(out == "keep");
  }
  SUBCASE("a limit below the length word fails at begin") {
    std::string out;
    MessageWriter w(out, 3);
    w.begin('S').end();
    CHECK_FALSE(w.ok());
    CHECK(out.empty());
  }
}

TEST_CASE("MessageWriter: writer and reader agree on the limit") {
  Limits limits;
  limits.max_message_size = 100;
  std::string out;
  MessageWriter w(out, limits.max_message_size);
  w.begin('Q').bytes(std::string(96, 'q')).end();
  REQUIRE(w.ok());
  const FrameResult r = read_frame(out, Sender::Client, limits);
  CHECK(r.status == FrameStatus::Complete);
  CHECK(r.frame.body.size() == 96);
}

TEST_CASE("MessageWriter: failure is sticky") {
  std::string out;
  MessageWriter w(out, 5);
  w.begin('d').bytes("ab").end();  // length 6 > 5
  REQUIRE_FALSE(w.ok());
  w.begin('S').end();
  w.begin_untyped().int32(1).end();
  CHECK_FALSE(w.ok());
  CHECK(out.empty());
}

TEST_CASE("MessageWriter: misuse fails the writer") {
  SUBCASE("end without begin") {
    std::string out;
    MessageWriter w(out);
    w.end();
    CHECK_FALSE(w.ok());
    CHECK(out.empty());
  }
  SUBCASE("end twice") {
    std::string out;
    MessageWriter w(out);
    w.begin('S').end().end();
    CHECK_FALSE(w.ok());
    CHECK(out == "S\0\0\0\4"s);
  }
  SUBCASE("begin while a message is open drops the open message") {
    std::string out;
    MessageWriter w(out);
    w.begin('Q').cstr("x").begin('S').end();
    CHECK_FALSE(w.ok());
    CHECK(out.empty());
  }
  SUBCASE("begin_untyped while an untyped packet is open") {
    std::string out;
    MessageWriter w(out);
    w.begin_untyped().int32(1).begin_untyped();
    CHECK_FALSE(w.ok());
    CHECK(out.empty());
  }
  SUBCASE("field outside a message") {
    std::string out;
    MessageWriter w(out);
    w.int32(7);
    CHECK_FALSE(w.ok());
    CHECK(out.empty());
  }
  SUBCASE("cstr with an embedded NUL") {
    std::string out;
    MessageWriter w(out);
    w.begin('Q').cstr("a\0b"s).end();
    CHECK_FALSE(w.ok());
    CHECK(out.empty());
  }
}

TEST_CASE("MessageWriter: large message length is exact") {
  std::string out;
  const std::string payload(70000, 'p');
  MessageWriter w(out);
  w.begin('d').bytes(payload).end();
  REQUIRE(w.ok());
  const FrameResult r = read_frame(out, Sender::Client, Limits{});
  REQUIRE(r.status == FrameStatus::Complete);
  CHECK(r.frame.body == payload);
}

}  // namespace sw::wire
