// Child processes for the integration tests: run a command to completion with captured output,
// or keep one running in the background. fork/exec only, never a shell.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace it {

using namespace std::chrono_literals;

struct CommandResult {
  int exit_code = -1;      // WEXITSTATUS, or -1 when killed by a signal / timed out
  int term_signal = 0;     // the signal that ended it, if any
  bool timed_out = false;  // killed because `timeout` passed
  std::string out;
  std::string err;
  std::string describe() const;  // "exit 0" / "signal 9" / "timed out", plus stdout/stderr tails
};

struct CommandOptions {
  std::string cwd;                         // empty: inherit
  std::map<std::string, std::string> env;  // added to (or replacing in) the environment
  std::vector<std::string> unset_env;      // removed from the environment
};

// Runs argv[0] (PATH is searched), feeds `stdin_text`, captures stdout and stderr. On timeout the
// child's process group is killed with SIGKILL.
CommandResult run_command(const std::vector<std::string>& argv, const std::string& stdin_text = {},
                          std::chrono::milliseconds timeout = 60s, const CommandOptions& options = {});

// Prefixes argv with `runuser -u postgres --` when running as root (PostgreSQL refuses root).
std::vector<std::string> as_postgres(std::vector<std::string> argv);
bool running_as_root();

// A background child with stdout+stderr appended to a file. The child gets SIGKILL if the thread
// that started it dies (PR_SET_PDEATHSIG), so a crashed test leaves nothing running.
class Background {
 public:
  Background() = default;
  Background(const std::vector<std::string>& argv, const std::string& log_file,
             const CommandOptions& options = {});
  ~Background();
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;
  Background(Background&& other) noexcept;
  Background& operator=(Background&& other) noexcept;

  pid_t pid() const { return pid_; }
  bool running();        // false once it has exited (status recorded)
  bool signal(int sig);  // false if it is no longer running
  // Waits up to `timeout` for exit; returns the raw wait status.
  std::optional<int> wait_exit(std::chrono::milliseconds timeout);
  std::optional<int> status() const { return status_; }
  void kill_and_wait();  // SIGKILL + reap, if still running

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

std::string describe_wait_status(int status);

// Small file helpers.
std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& content);
std::string tail_lines(const std::string& text, size_t lines);

// mkdtemp("/tmp/<prefix>XXXXXX"); removed by the destructor.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "shardwire-it-");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A loopback TCP port that was free a moment ago (bind port 0, read it back, close).
int free_port();
// True once a TCP connect to 127.0.0.1:port succeeds.
bool port_accepts(int port);

// Directory with psql/pgbench/initdb/pg_ctl: $PG_BINDIR, else /usr/lib/postgresql/15/bin.
std::string pg_bindir();
std::string pg_bin(const std::string& tool);

// A name unique within this test process, for tables and databases in the shared cluster.
std::string unique_name(const std::string& prefix);

}  // namespace it
