#include "common/utf8.h"

#include <doctest/doctest.h>

#include <string>

TEST_CASE("append_utf8: one to four bytes, at each length's bounds") {
  struct Case {
    uint32_t cp;
    std::string bytes;
  };
  const Case cases[] = {
      {0x0, std::string(1, '\0')},
      {0x41, "A"},
      {0x7F, "\x7F"},
      {0x80, "\xC2\x80"},
      {0xE9, "\xC3\xA9"},  // é
      {0x7FF, "\xDF\xBF"},
      {0x800, "\xE0\xA0\x80"},
      {0x20AC, "\xE2\x82\xAC"},  // €
      {0xFFFF, "\xEF\xBF\xBF"},
      {0x10000, "\xF0\x90\x80\x80"},
      {0x1F600, "\xF0\x9F\x98\x80"},
      {0x10FFFF, "\xF4\x8F\xBF\xBF"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.cp);
    std::string out = "x";
    sw::append_utf8(out, c.cp);
    CHECK(out == "x" + c.bytes);  // appended after what was there
  }
}
