#include "catalog/pq.h"

#include <charconv>
#include <cstring>

#include "common/log.h"

namespace sw::catalog {

void PgConnDeleter::operator()(PGconn* c) const { PQfinish(c); }
void PgResultDeleter::operator()(PGresult* r) const { PQclear(r); }
namespace {

// libpq messages end in a newline and may span lines ("...\n\tIs the server running..."): one
// line for the log, trailing whitespace dropped.
std::string trim_trailing(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n' || c == '\t') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// NOTICEs (e.g. "relation already exists, skipping" from idempotent DDL) go to the debug log,
// not to stderr as libpq's default processor would print them.
void log_notice(void*, const char* message) {
  size_t n = std::strlen(message);
  while (n > 0 && message[n - 1] == '\n') --n;
  LOG_DEBUG("postgres notice: %.*s", static_cast<int>(n), message);
}

bool ok_status(ExecStatusType st) { return st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK; }

}  // namespace

Result<PgConnPtr> connect(const std::string& dsn, const std::string& what, const ConnectOptions& options) {
  // Our defaults come first: the expanded DSN (dbname, expand_dbname=1) overrides them.
  const std::string timeout = std::to_string(options.connect_timeout_s);
  const std::string user_timeout = std::to_string(options.tcp_user_timeout_ms);
  // JIT compiles expensive-looking plans; the catalog's and the mover's statements are short, and
  // a misestimated one paid ~70 ms of compilation per directory load.
  const char* keys[] = {
      "application_name", "connect_timeout",  "keepalives", "keepalives_idle", "keepalives_interval",
      "keepalives_count", "tcp_user_timeout", "options",    "dbname",          nullptr};
  const char* values[] = {options.application_name.c_str(),
                          timeout.c_str(),
                          "1",
                          "5",
                          "2",
                          "3",
                          user_timeout.c_str(),
                          "-c jit=off",
                          dsn.c_str(),
                          nullptr};
  PgConnPtr conn(PQconnectdbParams(keys, values, /*expand_dbname=*/1));
  if (!conn) return Status::server("08006", what + ": out of memory connecting");
  if (PQstatus(conn.get()) != CONNECTION_OK) {
    return Status::server("08006", what + ": " + trim_trailing(PQerrorMessage(conn.get())));
  }
  PQsetNoticeProcessor(conn.get(), log_notice, nullptr);
  return conn;
}

Status error_status(PGconn* conn, const PGresult* res, const std::string& context) {
  std::string sqlstate, message;
  if (res) {
    const char* s = PQresultErrorField(res, PG_DIAG_SQLSTATE);
    const char* m = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
    if (s) sqlstate = s;
    if (m) message = m;
    if (message.empty()) message = trim_trailing(PQresultErrorMessage(res));
  }
  if (message.empty() && conn) message = trim_trailing(PQerrorMessage(conn));
  if (sqlstate.empty() || (conn && PQstatus(conn) != CONNECTION_OK)) sqlstate = "08006";
  if (message.empty()) message = "unknown error";
  return Status::server(sqlstate, context + ": " + message);
}

Status exec(PGconn* conn, const std::string& sql) {
  if (!PQsendQuery(conn, sql.c_str())) return error_status(conn, nullptr, "sending query");
  // Drain every result; the first error wins (PostgreSQL stops at it anyway).
  Status status = Status::ok();
  while (PGresult* raw = PQgetResult(conn)) {
    PgResultPtr res(raw);
    if (status.is_ok() && !ok_status(PQresultStatus(raw))) status = error_status(conn, raw, "query failed");
  }
  if (status.is_ok() && PQstatus(conn) != CONNECTION_OK) status = error_status(conn, nullptr, "query failed");
  return status;
}

Result<PgResultPtr> query(PGconn* conn, const std::string& sql,
                          const std::vector<std::optional<std::string>>& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  PgResultPtr res(PQexecParams(conn, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(),
                               nullptr, nullptr, /*resultFormat=*/0));
  if (!res || !ok_status(PQresultStatus(res.get()))) return error_status(conn, res.get(), "query failed");
  return res;
}

std::string text_value(const PGresult* res, int row, int col) {
  if (PQgetisnull(res, row, col)) return {};
  return std::string(PQgetvalue(res, row, col), static_cast<size_t>(PQgetlength(res, row, col)));
}

bool parse_int64(const std::string& text, int64_t* out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

bool parse_int64(const PGresult* res, int row, int col, int64_t* out) {
  if (PQgetisnull(res, row, col)) return false;
  return parse_int64(text_value(res, row, col), out);
}

std::string text_array_literal(const std::vector<std::string>& items) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += '"';
    for (char c : items[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

bool connection_lost(PGconn* conn) { return !conn || PQstatus(conn) != CONNECTION_OK; }

}  // namespace sw::catalog
