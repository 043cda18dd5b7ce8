// Thin RAII helpers over libpq's blocking API for the catalog and the mover (the only modules that
// use libpq; others reach the catalog and the shards through their interfaces).
// Every failure becomes a Status with the server's SQLSTATE; messages never contain a DSN or a
// password (libpq's own messages name host and port, never the password).
#pragma once

#include <libpq-fe.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "catalog/pq_handle.h"
#include "common/status.h"

namespace sw::catalog {

struct ConnectOptions {
  std::string application_name = "shardwire";
  int connect_timeout_s = 5;
  // TCP_USER_TIMEOUT (ms) and keepalives so a blocking call on a dead peer ends; values in the
  // DSN win over these defaults.
  int tcp_user_timeout_ms = 10000;
};

// Connects (blocking, bounded by connect_timeout). `what` names the target in errors, e.g.
// "catalog" or "shard s1". Fault::Server with SQLSTATE 08006 on failure.
Result<PgConnPtr> connect(const std::string& dsn, const std::string& what,
                          const ConnectOptions& options = {});

// Runs one or more statements (simple protocol); ok when the last result is COMMAND_OK/TUPLES_OK.
Status exec(PGconn* conn, const std::string& sql);

// Runs one statement with text parameters (extended protocol; std::nullopt is NULL). Returns the
// result when it is COMMAND_OK or TUPLES_OK.
Result<PgResultPtr> query(PGconn* conn, const std::string& sql,
                          const std::vector<std::optional<std::string>>& params = {});

// The error of a failed result (or of the connection when `res` is null) as a Status. SQLSTATE
// class 08 or a broken connection -> 08006.
Status error_status(PGconn* conn, const PGresult* res, const std::string& context);

// Field accessors for text-format results. parse_int64 returns false for NULL or non-numbers.
std::string text_value(const PGresult* res, int row, int col);
bool parse_int64(const PGresult* res, int row, int col, int64_t* out);
bool parse_int64(const std::string& text, int64_t* out);

// A PostgreSQL array literal ({"a","b"}) of the given strings, for a text[] parameter.
std::string text_array_literal(const std::vector<std::string>& items);

// True when the connection is unusable (broken socket, server gone).
bool connection_lost(PGconn* conn);

}  // namespace sw::catalog
