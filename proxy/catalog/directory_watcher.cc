#include "catalog/directory_watcher.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

#include "catalog/directory_loader.h"
#include "catalog/pq.h"
#include "common/log.h"
#include "sqltext/catalog_sql.h"

namespace sw::catalog {
namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

// Registers or heartbeats this router; returns the catalog's current directory version.
// $1 id, $2 loaded version, $3 host, $4 port, $5 pid, $6 first registration (resets started_at).
constexpr const char* kHeartbeatSql =
    "INSERT INTO shardwire.routers AS r (id, directory_version, heartbeat_at, started_at, host, port, pid) "
    "VALUES ($1, $2::bigint, now(), now(), $3, $4::int, $5::int) "
    "ON CONFLICT (id) DO UPDATE SET directory_version = EXCLUDED.directory_version, heartbeat_at = now(), "
    "started_at = CASE WHEN $6::bool THEN now() ELSE r.started_at END, "
    "host = EXCLUDED.host, port = EXCLUDED.port, pid = EXCLUDED.pid "
    "RETURNING (SELECT v.version FROM shardwire.directory_version v)";

constexpr const char* kDeregisterSql = "DELETE FROM shardwire.routers WHERE id = $1";

// Other registrations on this host and port: earlier processes (a restart), or a live one
// sharing the port through SO_REUSEPORT (a rolling restart). $1 host, $2 port, $3 this id.
constexpr const char* kSameAddressSql =
    "SELECT id, pid FROM shardwire.routers WHERE host = $1 AND port = $2::int AND id <> $3 AND pid IS NOT "
    "NULL";

std::string local_hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

}  // namespace

milliseconds heartbeat_interval_for(milliseconds configured, milliseconds lease) {
  if (configured.count() > 0) return configured;
  return std::max(milliseconds(10), std::min(milliseconds(1000), lease / 4));
}

milliseconds read_lease_for(milliseconds lease) {
  // Four seconds keeps a router whose watcher thread is starved on a loaded machine (heartbeats
  // seconds late) serving reads.
  return std::min(lease, std::max(milliseconds(4000), 2 * heartbeat_interval_for(milliseconds(0), lease)));
}

std::string default_router_id(const std::string& host, int port, long pid) {
  return host + ":" + std::to_string(port) + ":" + std::to_string(pid);
}

DirectoryWatcher::DirectoryWatcher(config::Config config, Publish publish, WatcherOptions options)
    : config_(std::move(config)), publish_(std::move(publish)), options_(std::move(options)) {
  host_ = local_hostname();
  router_id_ = options_.router_id.empty()
                   ? default_router_id(host_, config_.listen.port, static_cast<long>(getpid()))
                   : options_.router_id;
  heartbeat_interval_ = heartbeat_interval_for(options_.heartbeat_interval, config_.sharding.directory_lease);
  read_lease_ = read_lease_for(config_.sharding.directory_lease);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) throw std::runtime_error("directory watcher: eventfd failed");
}

DirectoryWatcher::~DirectoryWatcher() {
  stop();
  if (wake_fd_ >= 0) close(wake_fd_);
}

void DirectoryWatcher::start() {
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void DirectoryWatcher::stop() {
  stopping_ = true;
  wake();
  if (thread_.joinable()) thread_.join();
}

void DirectoryWatcher::request_refresh() {
  refresh_requested_ = true;
  wake();
}

void DirectoryWatcher::set_ignore_updates(bool ignore) {
  ignore_updates_ = ignore;
  if (!ignore) request_refresh();
}

std::shared_ptr<const router::Directory> DirectoryWatcher::update_config(const config::Config& config) {
  std::shared_ptr<const router::Directory> rebased;
  {
    std::lock_guard<std::mutex> lock(mu_);
    config_.shards = config.shards;
    config_.file = config.file;
    ++config_generation_;
    if (current_) {
      auto rebuilt = rebase_directory(*current_, config_.shard_names());
      if (rebuilt) current_ = *rebuilt;
      rebased = current_;
    }
  }
  if (rebased) warn_unconfigured(*rebased, config.file);
  return rebased;
}

void DirectoryWatcher::warn_unconfigured(const router::Directory& directory, const std::string& config_file) {
  for (const std::string& shard : unconfigured_shards(directory)) {
    LOG_ERROR(
        "catalog: directory version %llu puts buckets on shard \"%s\", which is not in the config's shards; "
        "statements on those buckets fail until you add shard %s to shards in %s and RELOAD",
        static_cast<unsigned long long>(directory.version()), shard.c_str(), shard.c_str(),
        config_file.c_str());
  }
}

bool DirectoryWatcher::lease_valid(Clock::time_point now) const {
  int64_t at = confirmed_at_ns_.load();
  if (at == 0) return false;
  auto age = now.time_since_epoch() - nanoseconds(at);
  return age <= duration_cast<nanoseconds>(config_.sharding.directory_lease);
}

bool DirectoryWatcher::read_lease_valid(Clock::time_point now) const {
  int64_t at = read_confirmed_at_ns_.load();
  if (at == 0) return false;
  auto age = now.time_since_epoch() - nanoseconds(at);
  return age < duration_cast<nanoseconds>(read_lease_);
}

std::shared_ptr<const router::Directory> DirectoryWatcher::current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return current_;
}

std::shared_ptr<const router::Directory> DirectoryWatcher::wait_for_directory(milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [this] { return current_ != nullptr; });
  return current_;
}

void DirectoryWatcher::wake() {
  uint64_t one = 1;
  ssize_t n = write(wake_fd_, &one, sizeof(one));
  (void)n;  // EAGAIN: the counter is already non-zero, the thread will wake anyway
}

void DirectoryWatcher::wait_for_wakeup(milliseconds timeout) {
  // Only stop() cuts the backoff short: refresh requests (one per fence error) must not turn a
  // catalog outage into a reconnect storm. A pending request is served after the reconnect.
  Clock::time_point deadline = Clock::now() + timeout;
  while (!stopping_) {
    Clock::time_point now = Clock::now();
    if (now >= deadline) break;
    pollfd fd{wake_fd_, POLLIN, 0};
    poll(&fd, 1, static_cast<int>(duration_cast<milliseconds>(deadline - now).count()) + 1);
    uint64_t value;
    while (read(wake_fd_, &value, sizeof(value)) > 0) {}
  }
}

void DirectoryWatcher::confirm(Clock::time_point started) {
  int64_t ns = duration_cast<nanoseconds>(started.time_since_epoch()).count();
  int64_t prev = confirmed_at_ns_.load();
  while (prev < ns && !confirmed_at_ns_.compare_exchange_weak(prev, ns)) {}
}

void DirectoryWatcher::drop_connection(const Status& why) {
  was_down_ = true;
  if (why.message != last_logged_error_) {
    LOG_WARN("catalog: %s; reconnecting (router %s)", why.message.c_str(), router_id_.c_str());
    last_logged_error_ = why.message;
  }
  conn_.reset();
  connected_ = false;
}

bool DirectoryWatcher::connect_and_load() {
  ConnectOptions copts;
  copts.application_name = "shardwire directory watcher";
  copts.tcp_user_timeout_ms =
      static_cast<int>(std::clamp<int64_t>(config_.sharding.directory_lease.count(), 1000, 10000));
  auto c = connect(config_.catalog.dsn, "catalog", copts);
  if (!c) {
    was_down_ = true;
    if (c.status().message != last_logged_error_) {
      LOG_WARN("%s; retrying (router %s)", c.status().message.c_str(), router_id_.c_str());
      last_logged_error_ = c.status().message;
    }
    return false;
  }
  conn_ = std::move(*c);
  connected_ = true;
  whole_load_due_ = true;  // the catalog may have been replaced or restored while away
  // LISTEN before loading, so no change between the load and the LISTEN is missed.
  if (Status s = exec(conn_.get(), std::string("LISTEN ") + sqltext::kNotifyChannel); !s) {
    drop_connection(s);
    return false;
  }
  if (!ignore_updates_ || !current()) {
    refresh_requested_ = false;
    if (!refresh(Clock::now())) return false;
  }
  if (!heartbeat(/*first=*/!registered_)) return false;
  if (!registered_) forget_dead_predecessors();
  registered_ = true;
  if (was_down_) {
    was_down_ = false;
    LOG_INFO("catalog: connected again; directory version %llu (router %s)",
             static_cast<unsigned long long>(loaded_version_.load()), router_id_.c_str());
    last_logged_error_.clear();
  }
  return true;
}

bool DirectoryWatcher::refresh(Clock::time_point started) {
  config::Config config;
  uint64_t generation;
  std::shared_ptr<const router::Directory> base;
  {
    std::lock_guard<std::mutex> lock(mu_);
    config = config_;
    generation = config_generation_;
    base = current_;
  }
  auto dir = load(config, base);
  if (!dir) {
    if (dir.status().fault != Fault::Config) {
      drop_connection(dir.status());
      return false;
    }
    // The catalog answered but its directory does not fit the config: keep the connection, do
    // not confirm (the lease lapses), retry on the next heartbeat or NOTIFY.
    if (dir.status().message != last_logged_error_) {
      LOG_ERROR("catalog: %s", dir.status().message.c_str());
      last_logged_error_ = dir.status().message;
    }
    return true;
  }
  std::shared_ptr<const router::Directory> snapshot = std::move(*dir);
  bool changed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (generation != config_generation_) {
      // Built over the shards of a config replaced meanwhile: load again with the new ones.
      refresh_requested_ = true;
      return true;
    }
    changed = !current_ || current_->version() != snapshot->version();
    if (changed) current_ = snapshot;
  }
  loaded_version_ = snapshot->version();
  confirm(started);
  if (changed) {
    cv_.notify_all();
    LOG_INFO("catalog: directory version %llu loaded (%u buckets)",
             static_cast<unsigned long long>(snapshot->version()), snapshot->bucket_count());
    if (!snapshot->all_configured()) warn_unconfigured(*snapshot, config.file);
    if (publish_) {
      try {
        publish_(snapshot);
      } catch (const std::exception& e) {
        LOG_ERROR("catalog: directory publish callback threw: %s", e.what());
      }
    }
  }
  return true;
}

// Only the buckets changed since `base` when that gives the whole directory exactly, else every
// bucket (docs/architecture.md §7.2).
Result<std::shared_ptr<const router::Directory>> DirectoryWatcher::load(
    const config::Config& config, const std::shared_ptr<const router::Directory>& base) {
  const auto started = Clock::now();
  auto took_ms = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - started).count(); };
  if (base && !whole_load_due_ && started >= incremental_retry_at_) {
    auto changed = load_directory_changes(conn_.get(), config, base);
    if (changed && *changed) {
      ++incremental_loads_;
      LOG_DEBUG("catalog: incremental load took %.1f ms", took_ms());
      return changed;
    }
    if (!changed && changed.status().sqlstate != "42703") return changed.status();
    if (!changed) {
      LOG_WARN(
          "catalog: the catalog has no shardwire.directory_version.full_since: every NOTIFY reloads all "
          "buckets until `shardwire init --config %s` upgrades it",
          config.file.c_str());
      incremental_retry_at_ = Clock::now() + std::chrono::minutes(1);
    }
  }
  auto whole = load_directory(conn_.get(), config);
  if (whole) {
    whole_load_due_ = false;
    ++whole_loads_;
    LOG_DEBUG("catalog: whole load took %.1f ms", took_ms());
  }
  return whole;
}

bool DirectoryWatcher::heartbeat(bool first) {
  Clock::time_point started = Clock::now();
  uint64_t loaded = loaded_version_.load();
  auto res = query(conn_.get(), kHeartbeatSql,
                   {router_id_, std::to_string(loaded), host_, std::to_string(config_.listen.port),
                    std::to_string(static_cast<long>(getpid())), first ? "true" : "false"});
  if (!res) {
    drop_connection(res.status());
    return false;
  }
  int64_t catalog_version = -1;
  if (!parse_int64(res->get(), 0, 0, &catalog_version)) {
    drop_connection(Status::server("XX000", "heartbeat returned no directory version"));
    return false;
  }
  if (static_cast<uint64_t>(catalog_version) == loaded && current()) {
    confirm(started);
    // The catalog recorded heartbeat_at no earlier than `started`: the mover can tell from it
    // when this router's read lease has run out.
    int64_t ns = duration_cast<nanoseconds>(started.time_since_epoch()).count();
    int64_t prev = read_confirmed_at_ns_.load();
    while (prev < ns && !read_confirmed_at_ns_.compare_exchange_weak(prev, ns)) {}
    return true;
  }
  if (ignore_updates_) return true;  // stale on purpose: no confirmation, the lease runs out
  uint64_t before = loaded_version_.load();
  if (!refresh(started)) return false;
  // This heartbeat reported the version loaded before the refresh: report the new one now, so a
  // cutover waiting for every router's acknowledgement does not wait for the next interval.
  return loaded_version_.load() == before || heartbeat(false);
}

// A router that died without deregistering (SIGKILL, a crash) would count as live until its
// lease ran out, and every cutover in that time would wait for its acknowledgement. A process
// on this host can tell for sure: a registration for this host and port whose pid no longer
// exists here is removed. Registrations of live processes are kept.
void DirectoryWatcher::forget_dead_predecessors() {
  auto res = query(conn_.get(), kSameAddressSql, {host_, std::to_string(config_.listen.port), router_id_});
  if (!res) return;  // the lease still expires them
  for (int row = 0; row < PQntuples(res->get()); ++row) {
    int64_t pid = 0;
    if (!parse_int64(res->get(), row, 1, &pid) || pid <= 0) continue;
    if (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    const std::string id = text_value(res->get(), row, 0);
    if (query(conn_.get(), kDeregisterSql, {id}))
      LOG_INFO("catalog: removed router %s (its process is gone)", id.c_str());
  }
}

bool DirectoryWatcher::drain_notifications() {
  bool newer = false;
  if (!conn_) return false;
  while (PGnotify* n = PQnotifies(conn_.get())) {
    LOG_DEBUG("catalog: NOTIFY %s", n->extra ? n->extra : "");
    int64_t v = -1;
    if (!parse_int64(std::string(n->extra ? n->extra : ""), &v) ||
        static_cast<uint64_t>(v) > loaded_version_.load())
      newer = true;
    PQfreemem(n);
  }
  return newer && !ignore_updates_;
}

void DirectoryWatcher::run() {
  milliseconds backoff = options_.reconnect_initial;
  Clock::time_point next_heartbeat = Clock::now();
  while (!stopping_) {
    if (!conn_) {
      if (!connect_and_load()) {
        wait_for_wakeup(backoff);
        backoff = std::min(backoff * 2, options_.reconnect_max);
        continue;
      }
      backoff = options_.reconnect_initial;
      next_heartbeat = Clock::now() + heartbeat_interval_;
    }
    bool want_refresh = drain_notifications();
    if (refresh_requested_.exchange(false) && !ignore_updates_) want_refresh = true;
    if (want_refresh) {
      // Report the new version at once: a cutover waits for every router to acknowledge it.
      if (!refresh(Clock::now()) || !heartbeat(false)) continue;
      next_heartbeat = Clock::now() + heartbeat_interval_;
      continue;  // a NOTIFY that arrived during these queries sits in libpq's buffer: drain first
    }
    if (Clock::now() >= next_heartbeat) {
      if (!heartbeat(false)) continue;
      next_heartbeat = Clock::now() + heartbeat_interval_;
      continue;
    }
    Clock::time_point now = Clock::now();
    auto wait = next_heartbeat > now ? duration_cast<milliseconds>(next_heartbeat - now) + milliseconds(1)
                                     : milliseconds(0);
    pollfd fds[2] = {{PQsocket(conn_.get()), POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    int rc = poll(fds, 2, static_cast<int>(wait.count()));
    if (rc < 0 && errno != EINTR) {
      drop_connection(Status::proxy("XX000", "poll failed"));
      continue;
    }
    if (fds[1].revents) {
      uint64_t value;
      while (read(wake_fd_, &value, sizeof(value)) > 0) {}
    }
    if (fds[0].revents && !PQconsumeInput(conn_.get())) {
      drop_connection(error_status(conn_.get(), nullptr, "connection lost"));
    }
  }
  if (conn_) {
    auto res = query(conn_.get(), kDeregisterSql, {router_id_});
    if (!res)
      LOG_WARN("catalog: could not deregister router %s: %s", router_id_.c_str(),
               res.status().message.c_str());
  }
  conn_.reset();
  connected_ = false;
}

}  // namespace sw::catalog
