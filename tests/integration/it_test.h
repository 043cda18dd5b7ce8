// Shared includes and helpers for the integration test cases.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <string>
#include <thread>

#include "harness/pg_client.h"
#include "harness/pg_cluster.h"
#include "harness/process.h"
#include "harness/proxy_process.h"

// Proxy-specific behaviour cannot be checked against bare PostgreSQL (SHARDWIRE_IT_DIRECT=1).
#define PROXY_ONLY()                                                      \
  do {                                                                    \
    if (::it::direct_mode()) {                                            \
      MESSAGE("skipped in direct mode: this checks shardwire behaviour"); \
      return;                                                             \
    }                                                                     \
  } while (0)

// A PgResult-returning expression that must succeed; the failure shows the SQLSTATE and message.
#define REQUIRE_OK(expr)                                                     \
  do {                                                                       \
    ::it::PgResult it_result_ = (expr);                                      \
    REQUIRE_MESSAGE(it_result_.ok(), #expr " -> " << it_result_.describe()); \
  } while (0)
#define CHECK_OK(expr)                                                     \
  do {                                                                     \
    ::it::PgResult it_result_ = (expr);                                    \
    CHECK_MESSAGE(it_result_.ok(), #expr " -> " << it_result_.describe()); \
  } while (0)

namespace it {

inline bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

inline std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

inline long long ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start)
      .count();
}

inline void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

inline std::string psql() { return pg_bin("psql"); }
inline std::string pgbench() { return pg_bin("pgbench"); }

// Reads until the peer closes; expects an ErrorResponse with `sqlstate` (optionally after a
// one-byte 'S'/'N' answer to an SSLRequest) and the close. Bare PostgreSQL closes some malformed
// connections without an ErrorResponse (COMMERROR), so `error_required` is off in direct mode.
inline void expect_error_and_close(RawSocket& sock, const std::string& what, bool error_required = true,
                                   const std::string& sqlstate = "08P01", bool allow_ssl_answer = false) {
  auto start = std::chrono::steady_clock::now();
  std::string bytes = sock.read_until_closed(std::chrono::seconds(10));
  INFO(what << ": received " << wire::printable(bytes) << " in " << ms_since(start) << " ms");
  CHECK_MESSAGE(sock.closed(), "the connection was not closed within 10 s");
  std::string_view v = bytes;
  if (allow_ssl_answer && !v.empty() && (v[0] == 'S' || v[0] == 'N')) v.remove_prefix(1);
  auto err = wire::find_error(v);
  if (error_required || err) {
    REQUIRE_MESSAGE(err.has_value(), "no ErrorResponse before the close");
    CHECK(err->sqlstate() == sqlstate);
    CHECK(!err->message().empty());
  }
}

}  // namespace it
