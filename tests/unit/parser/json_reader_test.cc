#include "parser/json_reader.h"

#include <doctest/doctest.h>

#include <string>

using sw::parser::detail::JsonReader;

TEST_CASE("reads keys, scalars and skips nested values") {
  JsonReader r(R"( {"a": 12, "skip": {"x": [1, {"y": "}]"}, []]}, "b": "hi", "c": true,
                    "d": false, "e": -7, "f": [1, 2]} )");
  REQUIRE(r.begin_object());
  std::string_view key;
  int64_t a = 0, e = 0;
  std::string b;
  bool c = false, d = true;
  int elements = 0;
  while (r.next_key(key)) {
    if (key == "a") {
      CHECK(r.read_int(a));
    } else if (key == "b") {
      CHECK(r.read_string(b));
    } else if (key == "c") {
      CHECK(r.read_bool(c));
    } else if (key == "d") {
      CHECK(r.read_bool(d));
    } else if (key == "e") {
      CHECK(r.read_int(e));
    } else if (key == "f") {
      REQUIRE(r.begin_array());
      while (r.next_element()) {
        int64_t v = 0;
        CHECK(r.read_int(v));
        ++elements;
      }
    } else {
      CHECK(r.skip_value());
    }
  }
  CHECK(r.ok());
  CHECK(a == 12);
  CHECK(b == "hi");
  CHECK(c);
  CHECK_FALSE(d);
  CHECK(e == -7);
  CHECK(elements == 2);
}

TEST_CASE("decodes string escapes, including \\u and surrogate pairs") {
  JsonReader r(R"({"s": "a\"b\\c\/d\n\t\u0001\u00e9\ud83d\ude00"})");
  REQUIRE(r.begin_object());
  std::string_view key;
  REQUIRE(r.next_key(key));
  CHECK(key == "s");
  std::string s;
  REQUIRE(r.read_string(s));
  CHECK(s == "a\"b\\c/d\n\t\x01\xc3\xa9\xf0\x9f\x98\x80");
  CHECK_FALSE(r.next_key(key));
  CHECK(r.ok());
}

TEST_CASE("empty containers") {
  JsonReader r(R"({"a": {}, "b": [], "c": 1})");
  REQUIRE(r.begin_object());
  std::string_view key;
  REQUIRE(r.next_key(key));
  REQUIRE(r.begin_object());
  CHECK_FALSE(r.next_key(key));
  REQUIRE(r.next_key(key));
  CHECK(key == "b");
  REQUIRE(r.begin_array());
  CHECK_FALSE(r.next_element());
  REQUIRE(r.next_key(key));
  CHECK(key == "c");
  CHECK(r.skip_value());
  CHECK_FALSE(r.next_key(key));
  CHECK(r.ok());
}

TEST_CASE("malformed input fails and stays failed") {
  for (const char* bad : {R"({"a" 1})", R"({"a": "unterminated)", R"({"a": 1 "b": 2})", R"({"a": "\x"})",
                          R"({"a": {"b": 1})", R"({"a": "\ud83d\u0041"})"}) {
    JsonReader r(bad);
    std::string_view key;
    if (r.begin_object()) {
      while (r.next_key(key)) r.skip_value();
    }
    // Either an error was seen, or the outer object never closed.
    CHECK_MESSAGE(!r.ok(), bad);
    CHECK_FALSE(r.next_key(key));
    CHECK_FALSE(r.skip_value());
  }
}

TEST_CASE("skipping deeply nested values does not recurse") {
  std::string deep = "{\"a\":" + std::string(200000, '[') + std::string(200000, ']') + ",\"b\":2}";
  JsonReader r(deep);
  REQUIRE(r.begin_object());
  std::string_view key;
  REQUIRE(r.next_key(key));
  CHECK(r.skip_value());
  REQUIRE(r.next_key(key));
  CHECK(key == "b");
  int64_t b = 0;
  CHECK(r.read_int(b));
  CHECK(b == 2);
  CHECK_FALSE(r.next_key(key));
  CHECK(r.ok());
}
