#include "mover/replication.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "wire/pgoutput.h"

namespace sw::mover {
namespace {

using Clock = std::chrono::steady_clock;

// libpq's multi-line messages as one line.
std::string one_line(const char* message) {
  std::string out;
  for (const char* p = message; *p; ++p) {
    if (*p == '\n' || *p == '\t') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += *p;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// 1-63 characters of [a-z0-9_], as ReplicationSlotValidateName demands.
bool valid_slot_name(const std::string& name) {
  if (name.empty() || name.size() > 63) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

Status invalid_slot_name(const std::string& name) {
  return Status::server("42602",
                        "replication slot name \"" + name + "\" is invalid (use 1-63 of a-z, 0-9, _)");
}

// A publication name inside publication_names '...': an identifier list split by PostgreSQL's
// SplitIdentifierString, so the name is double-quoted (keeps its case), and the whole option is a
// string literal (single quotes doubled).
std::string publication_option(const std::string& publication) {
  std::string ident = "\"";
  for (char c : publication) {
    if (c == '"') ident += '"';
    ident += c;
  }
  ident += '"';
  std::string literal = "'";
  for (char c : ident) {
    if (c == '\'') literal += '\'';
    literal += c;
  }
  return literal + "'";
}

wire::pgoutput::PgTimestamp now_pg() {
  const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  return wire::pgoutput::pg_timestamp_from_unix_micros(
      std::chrono::duration_cast<std::chrono::microseconds>(since_epoch).count());
}

}  // namespace

Result<std::unique_ptr<ReplicationConnection>> ReplicationConnection::open(const std::string& dsn) {
  // Defaults first; the expanded DSN overrides them; replication=database comes last so it wins.
  const char* keys[] = {
      "application_name", "connect_timeout",  "keepalives", "keepalives_idle", "keepalives_interval",
      "keepalives_count", "tcp_user_timeout", "dbname",     "replication",     nullptr};
  const char* values[] = {kMoverApplicationName, "5",        "1",    "5", "2", "3", "10000",
                          dsn.c_str(),           "database", nullptr};
  catalog::PgConnPtr conn(PQconnectdbParams(keys, values, /*expand_dbname=*/1));
  if (!conn) return Status::server("08006", "replication connection: out of memory");
  if (PQstatus(conn.get()) != CONNECTION_OK)
    return Status::server("08006", "replication connection: " + one_line(PQerrorMessage(conn.get())));
  return std::unique_ptr<ReplicationConnection>(new ReplicationConnection(std::move(conn)));
}

Result<ReplicationConnection::Slot> ReplicationConnection::create_slot(const std::string& name,
                                                                       bool export_snapshot,
                                                                       std::chrono::milliseconds timeout) {
  if (!valid_slot_name(name)) return invalid_slot_name(name);
  if (streaming_) return Status::proxy("XX000", "create_slot on a streaming replication connection");
  const std::string sql = "CREATE_REPLICATION_SLOT " + name + " LOGICAL pgoutput " +
                          (export_snapshot ? "EXPORT_SNAPSHOT" : "NOEXPORT_SNAPSHOT");
  // The server answers once every transaction that was writing when the command arrived has
  // ended; a transaction left open would hold the mover here with no sign. Bound the wait.
  if (PQsendQuery(conn_.get(), sql.c_str()) != 1)
    return catalog::error_status(conn_.get(), nullptr, "creating replication slot " + name);
  const auto deadline = Clock::now() + timeout;
  while (PQisBusy(conn_.get())) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      if (PGcancel* cancel = PQgetCancel(conn_.get())) {
        char error[256];
        PQcancel(cancel, error, sizeof error);
        PQfreeCancel(cancel);
      }
      while (PGresult* rest = PQgetResult(conn_.get())) PQclear(rest);
      return Status::server(
          "55006", "creating replication slot " + name + " waited " + std::to_string(timeout.count() / 1000) +
                       " s for transactions that were writing on the shard to end; retrying later");
    }
    pollfd pfd{PQsocket(conn_.get()), POLLIN, 0};
    if (poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 100))) > 0 &&
        PQconsumeInput(conn_.get()) == 0)
      return catalog::error_status(conn_.get(), nullptr, "creating replication slot " + name);
  }
  catalog::PgResultPtr res(PQgetResult(conn_.get()));
  while (PGresult* rest = PQgetResult(conn_.get())) PQclear(rest);
  if (!res || PQresultStatus(res.get()) != PGRES_TUPLES_OK || PQntuples(res.get()) != 1 ||
      PQnfields(res.get()) < 3)
    return catalog::error_status(conn_.get(), res.get(), "creating replication slot " + name);
  Slot slot;
  slot.name = catalog::text_value(res.get(), 0, 0);
  auto lsn = parse_lsn(catalog::text_value(res.get(), 0, 1));
  if (!lsn) return lsn.status();
  slot.consistent_point = *lsn;
  slot.snapshot_name = catalog::text_value(res.get(), 0, 2);
  return slot;
}

Status ReplicationConnection::start(const std::string& slot, Lsn from, const std::string& publication) {
  if (!valid_slot_name(slot)) return invalid_slot_name(slot);
  if (streaming_) return Status::proxy("XX000", "start on a streaming replication connection");
  const std::string sql = "START_REPLICATION SLOT " + slot + " LOGICAL " + lsn_text(from) +
                          " (proto_version '1', publication_names " + publication_option(publication) + ")";
  catalog::PgResultPtr res(PQexec(conn_.get(), sql.c_str()));
  if (!res || PQresultStatus(res.get()) != PGRES_COPY_BOTH)
    return catalog::error_status(conn_.get(), res.get(), "starting replication from slot " + slot);
  streaming_ = true;
  return Status::ok();
}

Result<std::optional<std::string>> ReplicationConnection::next(std::chrono::milliseconds timeout) {
  if (!streaming_) return Status::proxy("XX000", "next() before start()");
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    char* buffer = nullptr;
    const int n = PQgetCopyData(conn_.get(), &buffer, /*async=*/1);
    if (n > 0) {
      std::string payload(buffer, static_cast<size_t>(n));
      PQfreemem(buffer);
      return std::optional<std::string>(std::move(payload));
    }
    if (n == -1) {  // the server ended the COPY: its result says why
      streaming_ = false;
      catalog::PgResultPtr res(PQgetResult(conn_.get()));
      if (res && PQresultStatus(res.get()) == PGRES_FATAL_ERROR)
        return catalog::error_status(conn_.get(), res.get(), "replication stream");
      return Status::server("08006", "replication stream: the server ended the stream");
    }
    if (n == -2) return catalog::error_status(conn_.get(), nullptr, "replication stream");
    // A zero timeout still looks at the socket once: "nothing more right now" must mean it.
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd pfd{PQsocket(conn_.get()), POLLIN, 0};
    const int ready = poll(&pfd, 1, static_cast<int>(std::clamp<int64_t>(left.count() + 1, 0, 60000)));
    if (ready < 0 && errno != EINTR)
      return Status::server("08006", std::string("replication stream: poll: ") + std::strerror(errno));
    if (ready > 0 && PQconsumeInput(conn_.get()) == 0)
      return catalog::error_status(conn_.get(), nullptr, "replication stream");
    if (ready == 0 && left.count() <= 0) return std::optional<std::string>();
  }
}

Status ReplicationConnection::send_status(Lsn written, Lsn flushed, Lsn applied, bool reply_requested) {
  if (!streaming_) return Status::proxy("XX000", "send_status() before start()");
  std::string payload;
  wire::pgoutput::encode_standby_status_update(payload,
                                               {written, flushed, applied, now_pg(), reply_requested});
  if (PQputCopyData(conn_.get(), payload.data(), static_cast<int>(payload.size())) != 1 ||
      PQflush(conn_.get()) != 0)
    return catalog::error_status(conn_.get(), nullptr, "sending standby status");
  return Status::ok();
}

}  // namespace sw::mover
