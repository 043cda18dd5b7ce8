#include "harness/pg_cluster.h"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "harness/process.h"

namespace it {
namespace {

void chown_to_postgres(const std::string& path) {
  if (!running_as_root()) return;
  passwd* pw = getpwnam("postgres");
  if (!pw) throw std::runtime_error("running as root but there is no `postgres` user");
  if (chown(path.c_str(), pw->pw_uid, pw->pw_gid) != 0)
    throw std::runtime_error("chown " + path + ": " + std::strerror(errno));
}

void check(const CommandResult& r, const std::string& what) {
  if (r.timed_out || r.exit_code != 0) throw std::runtime_error(what + " failed: " + r.describe());
}

}  // namespace

PgCluster::PgCluster() {
  char tmpl[] = "/tmp/shardwire-pg-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
  dir_ = tmpl;
  try {
    chown_to_postgres(dir_);
    start_reaper();
    CommandOptions opts;
    opts.cwd = dir_;  // the postgres user cannot chdir into /root
    opts.env["LC_ALL"] = "C";
    auto r = run_command(
        as_postgres({pg_bin("initdb"), "-D", data_dir(), "-U", "postgres", "-E", "UTF8", "--locale=C",
                     "--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync", "--no-instructions"}),
        "", 120s, opts);
    check(r, "initdb");
    {
      std::ofstream conf(data_dir() + "/postgresql.conf", std::ios::app);
      conf << "\n# shardwire integration test harness\n"
           << "listen_addresses = '127.0.0.1'\n"
           << "unix_socket_directories = '" << dir_ << "'\n"
           << "wal_level = logical\n"
           << "max_connections = 200\n"
           // The reshard benchmark's 20 shard databases: every concurrent migration holds two
           // slots, and each stream a walsender (PostgreSQL's default is 10 of each).
           << "max_replication_slots = 40\n"
           << "max_wal_senders = 40\n"
           << "max_prepared_transactions = 10\n"  // two_phase: a PREPARE TRANSACTION must be possible
           << "fsync = off\n"
           << "synchronous_commit = off\n"
           // Asynchronous commits are for speed; a walsender sends only flushed WAL, so with the
           // default 200 ms writer delay the mover's catch-up would see commits up to 200 ms late,
           // unlike a production server with synchronous_commit = on.
           << "wal_writer_delay = 10ms\n"
           << "full_page_writes = off\n"
           << "password_encryption = 'scram-sha-256'\n"
           << "log_min_messages = warning\n";
    }
    pg_ctl_start();
    PgConn admin_conn = admin("postgres");
    for (const char* sql :
         {"CREATE ROLE app LOGIN SUPERUSER PASSWORD 'secret'", "CREATE DATABASE app OWNER app"}) {
      PgResult res = admin_conn.exec(sql);
      if (!res.ok()) throw std::runtime_error(std::string(sql) + ": " + res.describe());
    }
  } catch (...) {
    cleanup();
    throw;
  }
}

PgCluster::~PgCluster() { cleanup(); }

void PgCluster::cleanup() {
  stop_reaper();
  if (running_) {
    try {
      stop();
    } catch (...) {}
  }
  if (!dir_.empty() && !std::getenv("SHARDWIRE_IT_KEEP")) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  dir_.clear();
}

void PgCluster::pg_ctl_start() {
  std::string last_error;
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (port_ == 0 || attempt > 0) port_ = free_port();
    {
      std::ofstream conf(data_dir() + "/postgresql.conf", std::ios::app);
      conf << "port = " << port_ << "\n";  // the last setting wins
    }
    CommandOptions opts;
    opts.cwd = dir_;
    auto r = run_command(as_postgres({pg_bin("pg_ctl"), "start", "-w", "-t", "60", "-D", data_dir(), "-l",
                                      dir_ + "/postgres.log"}),
                         "", 90s, opts);
    if (r.exit_code == 0 && !r.timed_out) {
      running_ = true;
      return;
    }
    last_error = r.describe() + "\n--- postgres.log ---\n" + log_tail(20);
  }
  throw std::runtime_error("pg_ctl start failed: " + last_error);
}

void PgCluster::start() {
  if (running_) return;
  CommandOptions opts;
  opts.cwd = dir_;
  auto r = run_command(as_postgres({pg_bin("pg_ctl"), "start", "-w", "-t", "60", "-D", data_dir(), "-l",
                                    dir_ + "/postgres.log"}),
                       "", 90s, opts);
  if (r.exit_code != 0 || r.timed_out)
    throw std::runtime_error("pg_ctl start (restart on port " + std::to_string(port_) +
                             ") failed: " + r.describe() + "\n--- postgres.log ---\n" + log_tail(20));
  running_ = true;
}

void PgCluster::stop() {
  if (!running_) return;
  CommandOptions opts;
  opts.cwd = dir_;
  // Fast, not immediate: a stopped cluster must keep what it acknowledged (synchronous_commit is
  // off), since outage tests restart it.
  auto r = run_command(as_postgres({pg_bin("pg_ctl"), "stop", "-w", "-m", "fast", "-D", data_dir()}), "", 60s,
                       opts);
  running_ = false;
  check(r, "pg_ctl stop");
}

void PgCluster::restart_immediate() {
  CommandOptions opts;
  opts.cwd = dir_;
  auto r = run_command(as_postgres({pg_bin("pg_ctl"), "restart", "-w", "-t", "60", "-m", "immediate", "-D",
                                    data_dir(), "-l", dir_ + "/postgres.log"}),
                       "", 90s, opts);
  check(r, "pg_ctl restart -m immediate");
  running_ = true;
}

std::string PgCluster::conninfo(const std::string& db, const std::string& user,
                                const std::string& password) const {
  return "host=127.0.0.1 port=" + std::to_string(port_) + " dbname=" + db + " user=" + user +
         " password=" + password + " sslmode=disable";
}

std::string PgCluster::admin_conninfo(const std::string& db) const {
  return "host=" + dir_ + " port=" + std::to_string(port_) + " dbname=" + db + " user=postgres";
}

PgConn PgCluster::admin(const std::string& db) const { return connect_or_throw(admin_conninfo(db)); }

void PgCluster::create_database(const std::string& name, const std::string& owner) const {
  PgConn c = admin("postgres");
  PgResult r = c.exec("CREATE DATABASE " + name + " OWNER " + owner);
  if (!r.ok()) throw std::runtime_error("CREATE DATABASE " + name + ": " + r.describe());
}

int PgCluster::count_backends(const std::string& db) const {
  PgConn c = admin("postgres");
  return std::stoi(
      c.value("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
              "AND pid <> pg_backend_pid() AND datname = '" +
              db + "'"));
}

std::string PgCluster::log_tail(size_t lines) const {
  return tail_lines(read_file(dir_ + "/postgres.log"), lines);
}

void PgCluster::start_reaper() {
  // The reaper blocks reading a pipe whose only writer is this process; when this process exits
  // for any reason the read returns EOF and the reaper stops the cluster and removes the dir.
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  std::string script =
      "while read -r _; do :; done; "
      "if [ \"$4\" = 1 ]; then runuser -u postgres -- \"$1\" stop -D \"$2\" -m immediate; "
      "else \"$1\" stop -D \"$2\" -m immediate; fi >/dev/null 2>&1; "
      "[ -n \"$5\" ] || rm -rf \"$3\"";
  std::string ctl = pg_bin("pg_ctl"), data = data_dir(), root = running_as_root() ? "1" : "0";
  std::string keep = std::getenv("SHARDWIRE_IT_KEEP") ? "1" : "";
  std::string sh = "sh";
  std::vector<char*> argv = {sh.data(),     const_cast<char*>("-c"),
                             script.data(), sh.data(),
                             ctl.data(),    data.data(),
                             dir_.data(),   root.data(),
                             keep.data(),   nullptr};
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    setsid();
    dup2(fds[0], 0);
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) {
      dup2(devnull, 1);
      dup2(devnull, 2);
    }
    execv("/bin/sh", argv.data());
    _exit(127);
  }
  close(fds[0]);
  reaper_pid_ = pid;
  reaper_fd_ = fds[1];
}

void PgCluster::stop_reaper() {
  if (reaper_pid_ > 0) {
    kill(reaper_pid_, SIGKILL);
    waitpid(reaper_pid_, nullptr, 0);
    reaper_pid_ = -1;
  }
  if (reaper_fd_ >= 0) close(reaper_fd_);
  reaper_fd_ = -1;
}

PgCluster& shared_cluster() {
  static std::mutex mu;
  static std::unique_ptr<PgCluster> cluster;
  static std::string failure;
  std::lock_guard<std::mutex> lock(mu);
  if (!cluster) {
    if (!failure.empty()) throw std::runtime_error(failure);
    try {
      cluster = std::make_unique<PgCluster>();
    } catch (const std::exception& e) {
      failure = std::string("shared PostgreSQL cluster could not start: ") + e.what();
      throw std::runtime_error(failure);
    }
  }
  return *cluster;
}

}  // namespace it
