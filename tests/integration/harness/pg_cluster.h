// A throwaway PostgreSQL 15 cluster: initdb into a fresh /tmp directory, start on a free loopback
// port, role `app`/`secret` (LOGIN SUPERUSER) and database `app`. As root, every PostgreSQL program
// runs as the `postgres` user. The destructor stops it (-m immediate) and removes the directory; a
// small reaper process does the same if the test process dies without running destructors.
#pragma once

#include <sys/types.h>
#include <string>

#include "harness/pg_client.h"

namespace it {

class PgCluster {
 public:
  PgCluster();
  ~PgCluster();
  PgCluster(const PgCluster&) = delete;
  PgCluster& operator=(const PgCluster&) = delete;

  int port() const { return port_; }
  const std::string& dir() const { return dir_; }
  std::string data_dir() const { return dir_ + "/data"; }

  // TCP (scram-sha-256) connection string, as a client or a proxy would use it.
  std::string conninfo(const std::string& db = "app", const std::string& user = "app",
                       const std::string& password = "secret") const;
  // Superuser `postgres` over the Unix socket (trust).
  std::string admin_conninfo(const std::string& db = "postgres") const;
  PgConn admin(const std::string& db = "postgres") const;

  void create_database(const std::string& name, const std::string& owner = "app") const;
  // Client backends connected to `db` (excluding the caller's own).
  int count_backends(const std::string& db) const;

  void stop();   // pg_ctl stop -m immediate
  void start();  // pg_ctl start -w (same port)
  // pg_ctl restart -m immediate: the postmaster and every backend die at once, as in a crash, and
  // the server recovers from its WAL. Commits are kept only with synchronous_commit = on (the
  // harness sets it off; set it on with ALTER SYSTEM where a test needs that).
  void restart_immediate();
  bool running() const { return running_; }
  std::string log_tail(size_t lines = 40) const;

 private:
  void pg_ctl_start();
  void cleanup();
  void start_reaper();
  void stop_reaper();

  std::string dir_;
  int port_ = 0;
  bool running_ = false;
  pid_t reaper_pid_ = -1;
  int reaper_fd_ = -1;
};

// One cluster per test process, created on first use, stopped at exit.
PgCluster& shared_cluster();

}  // namespace it
