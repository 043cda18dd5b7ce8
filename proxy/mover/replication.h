// A libpq logical replication connection ("replication=database") to a source shard, for the
// mover (docs/architecture.md §8.3 and §8.4): creates the migration's slot (optionally exporting the
// snapshot the copy reads) and streams pgoutput from it. Blocking; one thread at a time.
//
// Errors are Status values with the server's SQLSTATE (08006 for a broken connection) and never
// contain the DSN or a password.
#pragma once

#include <libpq-fe.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "catalog/pq.h"
#include "common/status.h"
#include "mover/mover_types.h"

namespace sw::mover {

class ReplicationConnection {
 public:
  // Connects to `dsn` with replication=database (the DSN's other settings kept; its
  // application_name wins over the default kMoverApplicationName). Needs the REPLICATION
  // attribute (or superuser).
  static Result<std::unique_ptr<ReplicationConnection>> open(const std::string& dsn);

  struct Slot {
    std::string name;
    Lsn consistent_point = 0;   // the stream starts here; the exported snapshot sees exactly the
                                // transactions that committed before it
    std::string snapshot_name;  // empty without export
  };
  // CREATE_REPLICATION_SLOT <name> LOGICAL pgoutput (EXPORT_SNAPSHOT | NOEXPORT_SNAPSHOT). The
  // exported snapshot stays valid only while this connection stays open and runs nothing else.
  // Slot names: 1-63 characters of [a-z0-9_] (PostgreSQL's rule), else 42602.
  // Gives up (55006) after `timeout`: the server waits for every transaction writing at that moment.
  Result<Slot> create_slot(const std::string& name, bool export_snapshot,
                           std::chrono::milliseconds timeout = std::chrono::seconds(30));

  // START_REPLICATION SLOT <slot> LOGICAL <from> (proto_version '1', publication_names
  // '<publication>'). The server starts at max(from, the slot's confirmed_flush_lsn) and sends
  // only transactions that commit at or after it. The connection then carries only the stream.
  Status start(const std::string& slot, Lsn from, const std::string& publication);

  // The next CopyData payload of the stream (XLogData or keepalive, see wire/pgoutput.h), or
  // nullopt when `timeout` passed with nothing (never blocks longer). The server ending the
  // stream or the connection breaking is an error.
  Result<std::optional<std::string>> next(std::chrono::milliseconds timeout);

  // A standby status update ('r'): positions as PostgreSQL expects them (the end of the last
  // applied commit record / a keepalive's wal_end). `flushed` becomes the slot's
  // confirmed_flush_lsn: WAL before it may be recycled and is never sent again.
  Status send_status(Lsn written, Lsn flushed, Lsn applied, bool reply_requested);

  PGconn* get() const { return conn_.get(); }

 private:
  explicit ReplicationConnection(catalog::PgConnPtr conn) : conn_(std::move(conn)) {}

  catalog::PgConnPtr conn_;
  bool streaming_ = false;
};

}  // namespace sw::mover
