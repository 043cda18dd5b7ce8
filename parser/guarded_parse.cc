#include "parser/guarded_parse.h"

#include <pthread.h>

#include <cstring>

namespace sw::parser::detail {
namespace {

struct ParseJob {
  const char* sql;
  PgQueryParseResult result;
};

void* run_parse(void* arg) {
  auto* job = static_cast<ParseJob*>(arg);
  job->result = pg_query_parse(job->sql);
  // The result is malloc'ed, so it outlives this thread's libpg_query memory context, which
  // libpg_query releases when the thread exits.
  return nullptr;
}

}  // namespace

bool guarded_parse(const std::string& sql, PgQueryParseResult& out, Status& status) {
  if (sql.size() <= kInlineParseBytes) {
    out = pg_query_parse(sql.c_str());
    return true;
  }
  if (sql.size() > kMaxAnalyzeBytes) {
    status = Status::client("54000", "statement too large to analyze: " + std::to_string(sql.size()) +
                                         " bytes (limit " + std::to_string(kMaxAnalyzeBytes) + ")");
    return false;
  }
  const size_t stack = kHelperStackBase + sql.size() * kStackBytesPerSqlByte;
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) {
    status = Status::proxy("53200", "cannot start a parser thread");
    return false;
  }
  ParseJob job{sql.c_str(), {}};
  pthread_t thread;
  int rc = pthread_attr_setstacksize(&attr, stack);
  if (rc == 0) rc = pthread_create(&thread, &attr, run_parse, &job);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    status = Status::proxy("53200", std::string("cannot start a parser thread: ") + std::strerror(rc));
    return false;
  }
  pthread_join(thread, nullptr);
  out = job.result;
  return true;
}

}  // namespace sw::parser::detail
