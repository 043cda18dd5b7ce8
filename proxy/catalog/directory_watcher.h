// DirectoryWatcher: the proxy's link to the catalog. A background thread (never an event loop)
// that keeps the bucket directory current, registers the proxy in shardwire.routers and tells
// whether the directory is still confirmed (the lease, docs/architecture.md §7.2).
//
// Thread contract: start()/stop() from one owner thread; request_refresh(), lease_valid(),
// current(), loaded_version(), wait_for_directory(), set_ignore_updates(), update_config() from
// any thread. The
// publish callback runs on the watcher thread, once per new directory version (and for the first
// load), never concurrently with itself; it must not block for long (post to the workers).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "catalog/pq_handle.h"
#include "common/status.h"
#include "config/config.h"
#include "router/directory.h"

namespace sw::catalog {

struct WatcherOptions {
  std::string router_id;  // empty: "<hostname>:<listen.port>:<pid>"
  // Heartbeat period; 0: min(1 s, directory_lease / 4).
  std::chrono::milliseconds heartbeat_interval{0};
  // Reconnect backoff: doubles from `initial` up to `max` while the catalog is unreachable.
  std::chrono::milliseconds reconnect_initial{100};
  std::chrono::milliseconds reconnect_max{2000};
};

// The heartbeat period the watcher uses for a lease (pure; tested).
std::chrono::milliseconds heartbeat_interval_for(std::chrono::milliseconds configured,
                                                 std::chrono::milliseconds lease);
// The read lease (docs/architecture.md §7.4): a router serves reads of sharded tables only while
// its directory was confirmed less than this long ago, max(2 heartbeat intervals, 4 s) capped at
// the lease. The mover waits for MIGRATING acknowledgements only from routers that heartbeated
// within it, and when one did not acknowledge it waits this long after MIGRATING before the flip,
// so such a router cannot read the old owner after the flip. (pure; tested)
std::chrono::milliseconds read_lease_for(std::chrono::milliseconds lease);
// "<host>:<port>:<pid>" (pure; tested).
std::string default_router_id(const std::string& host, int port, long pid);

class DirectoryWatcher {
 public:
  using Clock = std::chrono::steady_clock;
  using Publish = std::function<void(std::shared_ptr<const router::Directory>)>;

  DirectoryWatcher(config::Config config, Publish publish, WatcherOptions options = {});
  ~DirectoryWatcher();  // stop()
  DirectoryWatcher(const DirectoryWatcher&) = delete;
  DirectoryWatcher& operator=(const DirectoryWatcher&) = delete;

  // Starts the thread: connect, LISTEN shardwire_directory, load + publish, register; then
  // refresh on NOTIFY / request_refresh() / a heartbeat that sees a newer version, heartbeat
  // every interval, reconnect with backoff after any catalog error. Call once.
  void start();
  // Wakes the thread, deletes this router's row (best effort), joins. Idempotent.
  void stop();

  // Asks for a reload soon (e.g. after a shard answered SW001). Never blocks.
  void request_refresh();

  // A config reload: from now on directories are built over `config`'s shards (a shard added
  // to the config becomes routable, one removed is named only by the catalog). Returns the
  // current directory rebuilt over them (the caller publishes it; a load already under way with
  // the old shards is discarded and repeated), or null before the first load. The catalog
  // connection, the lease and the router id keep the values the watcher started with.
  std::shared_ptr<const router::Directory> update_config(const config::Config& config);

  // True while the directory was confirmed -- a successful catalog round trip that loaded it or
  // saw the loaded version is still current -- less than sharding.directory_lease before `now`.
  // False before the first load. The confirmation time is when that round trip started.
  bool lease_valid(Clock::time_point now) const;
  // True while a heartbeat that found the loaded version current started less than
  // read_lease_for(directory_lease) before `now`: reads of sharded tables need it. Only
  // heartbeats count (they record heartbeat_at in the catalog), so a router whose heartbeat_at is
  // older than the read lease no longer reads.
  bool read_lease_valid(Clock::time_point now) const;
  // When the directory was last confirmed (see lease_valid); the epoch before the first load.
  Clock::time_point confirmed_at() const {
    return Clock::time_point(Clock::duration(confirmed_at_ns_.load()));
  }

  // The latest published snapshot, or null before the first load.
  std::shared_ptr<const router::Directory> current() const;
  uint64_t loaded_version() const { return loaded_version_.load(); }
  // Blocks until a snapshot is loaded or `timeout` passes (null then). For startup.
  std::shared_ptr<const router::Directory> wait_for_directory(std::chrono::milliseconds timeout) const;

  // Directory loads so far: whole (the first after each connect, and whenever the changed rows
  // cannot tell the whole directory) and incremental (only the buckets changed since the loaded
  // version). For tests and the log.
  uint64_t whole_loads() const { return whole_loads_.load(); }
  uint64_t incremental_loads() const { return incremental_loads_.load(); }

  const std::string& router_id() const { return router_id_; }
  bool connected() const { return connected_.load(); }

  // Test hook (simulates a stale proxy): while set, NOTIFYs, refresh requests and newer versions
  // seen by heartbeats are ignored; heartbeats go on reporting the old version, and the lease
  // lapses once the catalog's version moved past it. Clearing it triggers a refresh.
  void set_ignore_updates(bool ignore);

 private:
  void run();
  bool connect_and_load();
  bool refresh(Clock::time_point started);
  Result<std::shared_ptr<const router::Directory>> load(const config::Config& config,
                                                        const std::shared_ptr<const router::Directory>& base);
  bool heartbeat(bool first);  // first: also sets routers.started_at
  void forget_dead_predecessors();
  bool drain_notifications();  // true when a NOTIFY announced a version newer than loaded
  void drop_connection(const Status& why);
  void wait_for_wakeup(std::chrono::milliseconds timeout);
  void wake();
  void confirm(Clock::time_point started);
  void warn_unconfigured(const router::Directory& directory, const std::string& config_file);

  config::Config config_;  // shards and file change under mu_ (update_config); copy to read them
  Publish publish_;
  WatcherOptions options_;
  std::string router_id_;
  std::string host_;
  std::chrono::milliseconds heartbeat_interval_;
  std::chrono::milliseconds read_lease_;

  std::thread thread_;
  int wake_fd_ = -1;  // eventfd: stop, refresh requests
  std::atomic<bool> stopping_{false};
  std::atomic<bool> refresh_requested_{false};
  std::atomic<bool> ignore_updates_{false};
  std::atomic<bool> connected_{false};
  std::atomic<uint64_t> loaded_version_{0};
  std::atomic<int64_t> confirmed_at_ns_{0};       // Clock epoch ns; 0 = never
  std::atomic<int64_t> read_confirmed_at_ns_{0};  // by heartbeats only (read_lease_valid)
  std::atomic<uint64_t> whole_loads_{0};
  std::atomic<uint64_t> incremental_loads_{0};

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::shared_ptr<const router::Directory> current_;
  uint64_t config_generation_ = 0;  // update_config() calls so far

  // Watcher thread only.
  PgConnPtr conn_;
  std::string last_logged_error_;  // last warning logged, so a failure repeating is logged once
  bool registered_ = false;        // the routers row was written once (started_at set)
  bool was_down_ = false;          // a connection failed since the last successful connect
  bool whole_load_due_ = true;     // the first load on a connection reads every bucket
  // A catalog `shardwire init` has not upgraded has no full_since: whole loads until then.
  Clock::time_point incremental_retry_at_{};
};

}  // namespace sw::catalog
