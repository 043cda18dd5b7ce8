#include <doctest/doctest.h>

#include <stdexcept>

#include "config/config.h"

using namespace std::chrono_literals;
using sw::config::Duration;
using sw::config::parse_byte_size;
using sw::config::parse_duration;

TEST_CASE("durations with units") {
  CHECK(parse_duration("250ms") == 250ms);
  CHECK(parse_duration("5s") == 5s);
  CHECK(parse_duration("10m") == 10min);
  CHECK(parse_duration("10min") == 10min);
  CHECK(parse_duration("24h") == 24h);
  CHECK(parse_duration("2d") == 48h);
  CHECK(parse_duration("0s") == 0ms);
  CHECK(parse_duration(" 7 s ") == 7s);
}

TEST_CASE("a bare number is seconds") {
  CHECK(parse_duration("60") == 60s);
  CHECK(parse_duration("0") == 0s);
}

TEST_CASE("bad durations throw invalid_argument") {
  for (const char* bad : {"", "  ", "s", "5x", "5 sec", "-5s", "+5s", "1.5s", "5ms5", "5S", "0x10",
                          "99999999999999999999s", "9999999999999999h"}) {
    CHECK_THROWS_AS_MESSAGE(parse_duration(bad), std::invalid_argument, bad);
  }
}

TEST_CASE("byte sizes") {
  CHECK(parse_byte_size("1024") == 1024);
  CHECK(parse_byte_size("10B") == 10);
  CHECK(parse_byte_size("64kB") == 64u << 10);
  CHECK(parse_byte_size("256MB") == 256u << 20);
  CHECK(parse_byte_size("256MiB") == 256u << 20);
  CHECK(parse_byte_size("1GB") == 1u << 30);
  CHECK(parse_byte_size("1 gb") == 1u << 30);
  CHECK(parse_byte_size("2TB") == 2ull << 40);
  for (const char* bad : {"", "MB", "1.5GB", "-1", "10 XB", "99999999999TB"}) {
    CHECK_THROWS_AS_MESSAGE(parse_byte_size(bad), std::invalid_argument, bad);
  }
}
