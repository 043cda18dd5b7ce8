// Helpers of the resource_bounds suite: many libpq logins driven at once with
// PQconnectStart/PQconnectPoll (one thread, poll(2)), the memory and file limits of a process as
// /proc reports them, and this process's own open-file limit.
#pragma once

#include <libpq-fe.h>
#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "harness/pg_client.h"

namespace it::rb {

// Resident set of process `pid` in KiB (VmRSS of /proc/<pid>/status); -1 if unreadable.
long rss_kib(pid_t pid);
// Proportional set size in KiB (Pss of /proc/<pid>/smaps_rollup); -1 if unreadable.
long pss_kib(pid_t pid);
// The soft "Max open files" of process `pid` (/proc/<pid>/limits); -1 if unknown, 0 = unlimited.
long max_open_files(pid_t pid);
// Sets this process's soft RLIMIT_NOFILE to `soft` (capped at the hard limit); returns the soft
// limit in force afterwards.
long set_own_open_file_limit(long soft);
long own_hard_open_file_limit();

// One login attempt of a swarm.
struct Attempt {
  enum class State { NotStarted, Connecting, Ok, Failed };
  PgConn conn;
  State state = State::NotStarted;
  PostgresPollingStatusType polling = PGRES_POLLING_WRITING;  // what libpq waits for next
  std::string error;                                          // libpq's verbose message when Failed
  std::string sqlstate;  // from the verbose message ("53300", ...), "" if libpq had none
  std::chrono::steady_clock::time_point started, finished;
};

// `count` logins to `conninfo`, all driven from the calling thread. Connections that log in stay
// open (idle, holding only their client socket on the proxy) until close_all() or destruction.
class ClientSwarm {
 public:
  ClientSwarm(std::string conninfo, int count);
  ~ClientSwarm();
  ClientSwarm(const ClientSwarm&) = delete;
  ClientSwarm& operator=(const ClientSwarm&) = delete;

  // Drives attempts until each one finished (Ok or Failed) or `timeout` passed. At most
  // `max_in_flight` handshakes run at once (0: every attempt is started before any is polled, a
  // burst). Returns true when nothing is left unfinished.
  bool run(int max_in_flight, std::chrono::milliseconds timeout);

  int ok() const { return count(Attempt::State::Ok); }
  int failed() const { return count(Attempt::State::Failed); }
  int unfinished() const { return static_cast<int>(attempts_.size()) - ok() - failed(); }
  // Failed attempts grouped by SQLSTATE ("" = no SQLSTATE in libpq's message).
  std::map<std::string, int> failures_by_sqlstate() const;
  // The first `n` distinct failure messages, for diagnostics.
  std::string sample_errors(size_t n = 3) const;
  // Slowest attempt from start to Ok/Failed, in milliseconds.
  long long slowest_ms() const;
  const std::vector<Attempt>& attempts() const { return attempts_; }

  // The first `limit` logged-in connections (all when negative) run `sql` in turn, each bounded
  // by `timeout`; returns how many answered with a tuples/command result.
  int query_each(const std::string& sql, std::chrono::milliseconds timeout, int limit = -1);
  void close_all();

 private:
  int count(Attempt::State state) const;
  void start(Attempt& attempt);
  void advance(Attempt& attempt);
  void finish(Attempt& attempt, bool ok);

  std::string conninfo_;
  std::vector<Attempt> attempts_;
};

}  // namespace it::rb
