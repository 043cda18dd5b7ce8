#include "resource_bounds/client_swarm.h"

#include <poll.h>
#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace it::rb {
namespace {

using Clock = std::chrono::steady_clock;

// The number after `key` on the line of `path` that starts with it; -1 if absent.
long field_kib(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    std::istringstream rest(line.substr(key.size()));
    long value = -1;
    rest >> value;
    return value;
  }
  return -1;
}

std::string sqlstate_of(const std::string& verbose_message) {
  static const std::regex re(R"((ERROR|FATAL|PANIC):  ([0-9A-Z]{5}): )");
  std::smatch m;
  return std::regex_search(verbose_message, m, re) ? std::string(m[2]) : std::string();
}

}  // namespace

long rss_kib(pid_t pid) { return field_kib("/proc/" + std::to_string(pid) + "/status", "VmRSS:"); }

long pss_kib(pid_t pid) { return field_kib("/proc/" + std::to_string(pid) + "/smaps_rollup", "Pss:"); }

long max_open_files(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/limits");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Max open files", 0) != 0) continue;
    std::istringstream rest(line.substr(std::string("Max open files").size()));
    std::string soft;
    rest >> soft;
    return soft == "unlimited" ? 0 : std::stol(soft);
  }
  return -1;
}

long set_own_open_file_limit(long soft) {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  rlim_t wanted = static_cast<rlim_t>(soft);
  if (limit.rlim_max != RLIM_INFINITY && wanted > limit.rlim_max) wanted = limit.rlim_max;
  limit.rlim_cur = wanted;
  setrlimit(RLIMIT_NOFILE, &limit);
  getrlimit(RLIMIT_NOFILE, &limit);
  return static_cast<long>(limit.rlim_cur);
}

long own_hard_open_file_limit() {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  return limit.rlim_max == RLIM_INFINITY ? 1L << 20 : static_cast<long>(limit.rlim_max);
}

ClientSwarm::ClientSwarm(std::string conninfo, int count)
    : conninfo_(std::move(conninfo)), attempts_(static_cast<size_t>(count)) {}

ClientSwarm::~ClientSwarm() { close_all(); }

void ClientSwarm::start(Attempt& attempt) {
  attempt.started = Clock::now();
  attempt.state = Attempt::State::Connecting;
  attempt.polling = PGRES_POLLING_WRITING;  // libpq's contract right after PQconnectStart
  PGconn* raw = PQconnectStart(conninfo_.c_str());
  if (raw == nullptr) {
    attempt.error = "PQconnectStart: out of memory";
    finish(attempt, false);
    return;
  }
  PQsetErrorVerbosity(raw, PQERRORS_VERBOSE);
  attempt.conn = PgConn(raw);
  if (PQstatus(raw) == CONNECTION_BAD) {
    attempt.error = PQerrorMessage(raw);
    finish(attempt, false);
  }
}

void ClientSwarm::advance(Attempt& attempt) {
  attempt.polling = PQconnectPoll(attempt.conn.get());
  if (attempt.polling == PGRES_POLLING_OK) {
    PQsetErrorVerbosity(attempt.conn.get(), PQERRORS_DEFAULT);
    finish(attempt, true);
  } else if (attempt.polling == PGRES_POLLING_FAILED) {
    attempt.error = PQerrorMessage(attempt.conn.get());
    finish(attempt, false);
  }
}

void ClientSwarm::finish(Attempt& attempt, bool ok) {
  attempt.finished = Clock::now();
  attempt.state = ok ? Attempt::State::Ok : Attempt::State::Failed;
  if (!ok) {
    attempt.sqlstate = sqlstate_of(attempt.error);
    attempt.conn.reset();  // a failed attempt holds no socket
  }
}

bool ClientSwarm::run(int max_in_flight, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  size_t next = 0;
  while (next < attempts_.size() && attempts_[next].state != Attempt::State::NotStarted) ++next;
  std::vector<size_t> active;
  for (size_t i = 0; i < next; ++i)
    if (attempts_[i].state == Attempt::State::Connecting) active.push_back(i);
  std::vector<pollfd> fds;
  while (true) {
    while (next < attempts_.size() &&
           (max_in_flight == 0 || active.size() < static_cast<size_t>(max_in_flight))) {
      start(attempts_[next]);
      if (attempts_[next].state == Attempt::State::Connecting) active.push_back(next);
      ++next;
    }
    if (active.empty() && next == attempts_.size()) return true;
    if (Clock::now() >= deadline) return false;
    fds.clear();
    for (size_t i : active) {
      const Attempt& a = attempts_[i];
      fds.push_back({PQsocket(a.conn.get()),
                     static_cast<short>(a.polling == PGRES_POLLING_READING ? POLLIN : POLLOUT), 0});
    }
    if (poll(fds.data(), fds.size(), 50) < 0 && errno != EINTR) return false;
    for (size_t k = 0; k < fds.size(); ++k) {
      if (fds[k].revents != 0) advance(attempts_[active[k]]);
    }
    active.erase(std::remove_if(active.begin(), active.end(),
                                [&](size_t i) { return attempts_[i].state != Attempt::State::Connecting; }),
                 active.end());
  }
}

int ClientSwarm::count(Attempt::State state) const {
  return static_cast<int>(std::count_if(attempts_.begin(), attempts_.end(),
                                        [state](const Attempt& a) { return a.state == state; }));
}

std::map<std::string, int> ClientSwarm::failures_by_sqlstate() const {
  std::map<std::string, int> out;
  for (const Attempt& a : attempts_)
    if (a.state == Attempt::State::Failed) ++out[a.sqlstate];
  return out;
}

std::string ClientSwarm::sample_errors(size_t n) const {
  std::set<std::string> seen;
  std::string out;
  for (const Attempt& a : attempts_) {
    if (a.state != Attempt::State::Failed || seen.size() >= n || !seen.insert(a.error).second) continue;
    out += "[" + a.error + "] ";
  }
  return out;
}

long long ClientSwarm::slowest_ms() const {
  long long slowest = 0;
  for (const Attempt& a : attempts_) {
    if (a.state != Attempt::State::Ok && a.state != Attempt::State::Failed) continue;
    slowest = std::max<long long>(
        slowest, std::chrono::duration_cast<std::chrono::milliseconds>(a.finished - a.started).count());
  }
  return slowest;
}

int ClientSwarm::query_each(const std::string& sql, std::chrono::milliseconds timeout, int limit) {
  int asked = 0, answered = 0;
  for (Attempt& a : attempts_) {
    if (a.state != Attempt::State::Ok || (limit >= 0 && asked >= limit)) continue;
    ++asked;
    if (a.conn.exec(sql, timeout).ok()) ++answered;
  }
  return answered;
}

void ClientSwarm::close_all() {
  for (Attempt& a : attempts_) a.conn.reset();
}

}  // namespace it::rb
