// Reading a libpq pipeline's results one at a time with a deadline, for the suites that pipeline
// (protocol_test.cc, statements_test.cc).
#pragma once

#include <poll.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "it_test.h"

namespace it {

using Clock = std::chrono::steady_clock;

// Next result of a (pipeline-mode) connection, bounded by `deadline`. {timed_out, result}.
inline std::pair<bool, PGresult*> next_result(PGconn* c, Clock::time_point deadline) {
  while (PQisBusy(c)) {
    PQflush(c);
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return {true, nullptr};
    pollfd p{PQsocket(c), POLLIN, 0};
    poll(&p, 1, static_cast<int>(std::min<long long>(left, 500)));
    if (!PQconsumeInput(c)) break;
  }
  return {false, PQgetResult(c)};
}

// Status of the next result, "NULL" for the end-of-query marker, "TIMEOUT" when nothing came.
inline std::string next_status(PGconn* c, Clock::time_point deadline, std::string* value = nullptr,
                               std::string* sqlstate = nullptr) {
  auto [timed_out, res] = next_result(c, deadline);
  if (timed_out) return "TIMEOUT";
  if (!res) return "NULL";
  std::string st = PQresStatus(PQresultStatus(res));
  if (value && PQntuples(res) > 0) *value = PQgetvalue(res, 0, 0);
  if (sqlstate) {
    const char* s = PQresultErrorField(res, PG_DIAG_SQLSTATE);
    *sqlstate = s ? s : "";
  }
  PQclear(res);
  return st;
}

}  // namespace it
