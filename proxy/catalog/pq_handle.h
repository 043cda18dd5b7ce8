// Owning handles of libpq connections and results, declared without <libpq-fe.h> so a header can
// hold one (the DirectoryWatcher's connection) without exposing libpq to its includers. Only the
// catalog and the mover create and use them (catalog/pq.h).
#pragma once

#include <memory>

extern "C" {
typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;
}

namespace sw::catalog {

struct PgConnDeleter {
  void operator()(PGconn* c) const;  // PQfinish
};
struct PgResultDeleter {
  void operator()(PGresult* r) const;  // PQclear
};
using PgConnPtr = std::unique_ptr<PGconn, PgConnDeleter>;
using PgResultPtr = std::unique_ptr<PGresult, PgResultDeleter>;

}  // namespace sw::catalog
