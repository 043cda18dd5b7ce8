// Helpers of the mover suites (mover_test.cc, mover_ops_test.cc, mover_cutover_test.cc,
// mover_workload_test.cc): a
// sharded deployment with the admin console and mover settings (and /metrics when asked), the
// console's SHOW MIGRATIONS as a map, waits on a migration's state, a /metrics counter, and
// direct looks at the shards (rows of a bucket set, slots, publications, fences) and at the
// catalog's directory.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "harness/process.h"
#include "harness/sharded_fixture.h"
#include "it_test.h"

namespace it {

using Clock = std::chrono::steady_clock;

// A key as SQL text.
inline std::string key(int64_t k) { return std::to_string(k); }

inline std::vector<std::string> repeated(const std::string& value, size_t n) {
  return std::vector<std::string>(n, value);
}

// Mover and cutover settings of a test deployment (YAML durations, e.g. "2s").
struct MoverKnobs {
  std::string rollback_window = "2s";
  long long copy_rows_per_sec = 1000000;
  std::string queue_timeout = "3s";
  std::string drain_timeout = "2s";
};

// The fixture options of a mover test: user admin (password adminpw) may use the console.
inline ShardedOptions mover_options(const MoverKnobs& knobs) {
  ShardedOptions options;
  options.proxy.users.push_back({"admin", "adminpw"});
  options.proxy.extra_yaml =
      "admin:\n  users: [admin]\nmover:\n  copy_rows_per_sec: " + std::to_string(knobs.copy_rows_per_sec) +
      "\n  rollback_window: " + knobs.rollback_window +
      "\ncutover:\n  queue_timeout: " + knobs.queue_timeout + "\n  drain_timeout: " + knobs.drain_timeout +
      "\n";
  return options;
}

inline ShardedOptions mover_options(const std::string& rollback_window = "2s") {
  MoverKnobs knobs;
  knobs.rollback_window = rollback_window;
  return mover_options(knobs);
}

// A counter of shardwire's /metrics (0 when the family is missing or the scrape failed).
inline double metric_value(int port, const std::string& name) {
  CommandResult r = run_command(
      {"curl", "-sf", "--max-time", "2", "http://127.0.0.1:" + std::to_string(port) + "/metrics"});
  size_t at = 0;
  while ((at = r.out.find(name, at)) != std::string::npos) {
    bool line_start = at == 0 || r.out[at - 1] == '\n';
    size_t end = r.out.find('\n', at);
    std::string line = r.out.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at += name.size();
    if (!line_start || line.size() <= name.size() || (line[name.size()] != ' ' && line[name.size()] != '{'))
      continue;
    return std::stod(line.substr(line.rfind(' ') + 1));
  }
  return 0;
}

// Mover options with /metrics on a free loopback port (returned in `port`).
inline ShardedOptions with_metrics(ShardedOptions options, int* port) {
  *port = free_port();
  options.proxy.extra_yaml += "metrics:\n  listen: \"127.0.0.1:" + std::to_string(*port) + "\"\n";
  return options;
}

// A connection to the admin console (database shardwire) as admin.
inline PgConn admin_console(const ShardedFixture& f) {
  ConnectResult r = connect(f.proxy->conninfo("admin", "adminpw", "sslmode=disable dbname=shardwire"));
  if (!r.ok) throw std::runtime_error("admin connect: " + r.error + "\n" + f.log_tail());
  return std::move(r.conn);
}

// The migration's row in SHOW MIGRATIONS: column -> value (NULL reads as "").
inline std::map<std::string, std::string> migration(PgConn& admin, const std::string& id) {
  PgResult r = admin.exec("SHOW MIGRATIONS");
  std::map<std::string, std::string> row;
  for (int i = 0; i < r.rows(); ++i) {
    if (r.value(i, 0) != id) continue;
    for (int c = 0; c < r.cols(); ++c) row[r.names()[c]] = r.value(i, c);
  }
  return row;
}

// Waits until SHOW MIGRATIONS gives the migration `state`; `last` says what it was last.
inline bool wait_for_state(PgConn& admin, const std::string& id, const std::string& state,
                           std::chrono::milliseconds timeout, std::string* last) {
  return wait_until(
      [&] {
        auto row = migration(admin, id);
        *last = row["state"] + " step=" + row["step"] + " error=" + row["error"];
        return row["state"] == state;
      },
      timeout, 100ms);
}

// The last `lines` lines of the proxy's log, without the polling's "admin command: SHOW
// MIGRATIONS" lines (for failure messages).
inline std::string mover_log(const ShardedFixture& f, size_t lines = 60) {
  std::vector<std::string> kept;
  std::string log = f.proxy->log();
  size_t at = 0;
  while (at < log.size()) {
    size_t end = log.find('\n', at);
    if (end == std::string::npos) end = log.size();
    std::string line = log.substr(at, end - at);
    if (line.find("admin command: SHOW MIGRATIONS") == std::string::npos) kept.push_back(std::move(line));
    at = end + 1;
  }
  std::string out;
  for (size_t i = kept.size() > lines ? kept.size() - lines : 0; i < kept.size(); ++i) out += kept[i] + "\n";
  return out;
}

// ---- direct looks at shards and catalog (superuser connections) -------------------------------

// "1,5,9" for a bucket list.
inline std::string bucket_list(const std::vector<uint32_t>& buckets) {
  std::string out;
  for (uint32_t b : buckets) {
    if (!out.empty()) out += ',';
    out += std::to_string(b);
  }
  return out;
}

// SQL predicate "the row's bucket is one of `buckets`" for a bigint key column.
inline std::string in_buckets(const std::vector<uint32_t>& buckets, const std::string& key = "tenant_id") {
  return "shardwire.bucket_of(" + key + ", " + std::to_string(kBuckets) + ") IN (" + bucket_list(buckets) +
         ")";
}

// Every row of `table` in `buckets` on shard i, each as its columns' text joined by '|', sorted.
inline std::vector<std::string> bucket_rows(const ShardedFixture& f, int shard,
                                            const std::vector<uint32_t>& buckets,
                                            const std::string& table = "orders") {
  PgConn c = f.setup.shard(shard);
  PgResult r = c.exec("SELECT t::text FROM " + table + " t WHERE " + in_buckets(buckets) + " ORDER BY 1");
  if (!r.ok())
    throw std::runtime_error("rows of " + table + " on shard " + std::to_string(shard) + ": " + r.describe());
  std::vector<std::string> out;
  for (const auto& row : r.data()) out.push_back(row.at(0));
  return out;
}

// Replication slots / publications on shard i (their names, comma-separated; "" when none).
inline std::string slots_on(const ShardedFixture& f, int shard) {
  PgConn c = f.setup.shard(shard);
  return c.value(
      "SELECT coalesce(string_agg(slot_name, ','), '') FROM pg_replication_slots "
      "WHERE database = current_database()");
}
inline std::string publications_on(const ShardedFixture& f, int shard) {
  PgConn c = f.setup.shard(shard);
  return c.value("SELECT coalesce(string_agg(pubname, ','), '') FROM pg_publication");
}

// Of `buckets`, those fenced on shard i.
inline std::set<uint32_t> fenced_on(const ShardedFixture& f, int shard,
                                    const std::vector<uint32_t>& buckets) {
  PgConn c = f.setup.shard(shard);
  PgResult r =
      c.exec("SELECT bucket FROM shardwire.fenced_buckets WHERE bucket IN (" + bucket_list(buckets) + ")");
  if (!r.ok())
    throw std::runtime_error("fenced buckets on shard " + std::to_string(shard) + ": " + r.describe());
  std::set<uint32_t> out;
  for (const auto& row : r.data()) out.insert(static_cast<uint32_t>(std::stoul(row.at(0))));
  return out;
}

// holds_rows of each of `buckets` on shard i, in the order given: "t" or "f" where it is fenced,
// "-" where it is not.
inline std::vector<std::string> holds_rows_on(const ShardedFixture& f, int shard,
                                              const std::vector<uint32_t>& buckets) {
  PgConn c = f.setup.shard(shard);
  std::vector<std::string> out;
  for (uint32_t b : buckets) {
    PgResult r =
        c.exec("SELECT coalesce((SELECT holds_rows::text FROM shardwire.fenced_buckets WHERE bucket = " +
               std::to_string(b) + "), '-')");
    if (!r.ok())
      throw std::runtime_error("holds_rows on shard " + std::to_string(shard) + ": " + r.describe());
    out.push_back(r.value() == "true" ? "t" : r.value() == "false" ? "f" : r.value());
  }
  return out;
}

// The buckets whose fence on shard i says holds_rows = false while `table` there holds rows of
// them, in one snapshot ("" when none). Never any, at any moment of any move: scatter reads would
// count those rows (docs/architecture.md §5.6, "Owned rows only").
inline std::string empty_fences_with_rows(PgConn& shard, const std::string& table = "orders") {
  PgResult r = shard.exec(
      "SELECT coalesce(string_agg(f.bucket::text, ','), '') FROM shardwire.fenced_buckets f "
      "WHERE NOT f.holds_rows AND EXISTS (SELECT 1 FROM " +
      table + " t WHERE shardwire.bucket_of(t.tenant_id, " + std::to_string(kBuckets) + ") = f.bucket)");
  return r.ok() ? r.value() : "error: " + r.describe();
}
inline std::string empty_fences_with_rows(const ShardedFixture& f, int shard) {
  PgConn c = f.setup.shard(shard);
  return empty_fences_with_rows(c);
}

// Polls empty_fences_with_rows on every shard, every few ms, until stop(): a move's steps are
// looked at while they happen.
class FenceInvariantWatch {
 public:
  explicit FenceInvariantWatch(const ShardedFixture& f) {
    for (int s = 0; s < f.setup.shards(); ++s) shards_.push_back(f.setup.shard(s));
    thread_ = std::thread([this] {
      while (!stopping_) {
        for (size_t s = 0; s < shards_.size() && first_.empty(); ++s) {
          std::string found = empty_fences_with_rows(shards_[s]);
          if (!found.empty()) first_ = "s" + std::to_string(s) + ": " + found;
        }
        ++polls_;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    });
  }
  FenceInvariantWatch(const FenceInvariantWatch&) = delete;
  FenceInvariantWatch& operator=(const FenceInvariantWatch&) = delete;
  ~FenceInvariantWatch() { stop(); }
  // Ends the polling; the first violation seen ("s<i>: <buckets>"), "" when none.
  std::string stop() {
    stopping_ = true;
    if (thread_.joinable()) thread_.join();
    return first_;
  }
  int polls() const { return polls_; }

 private:
  std::vector<PgConn> shards_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> polls_{0};
  std::string first_;  // written by the thread only, read after join
  std::thread thread_;
};

// "shard/STATE" of each of `buckets` in the catalog's directory, e.g. {"s0/ACTIVE", ...}.
inline std::vector<std::string> directory_of(const ShardedFixture& f, const std::vector<uint32_t>& buckets) {
  PgConn c = f.setup.catalog();
  PgResult r = c.exec("SELECT shard || '/' || state FROM shardwire.buckets WHERE bucket IN (" +
                      bucket_list(buckets) + ") ORDER BY bucket");
  if (!r.ok()) throw std::runtime_error("directory: " + r.describe());
  std::vector<std::string> out;
  for (const auto& row : r.data()) out.push_back(row.at(0));
  return out;
}

// Distinct keys (ascending from `from`) whose buckets are distinct and satisfy pred(bucket).
template <typename Pred>
std::vector<int64_t> keys_in_distinct_buckets(size_t n, Pred pred, int64_t from = 1) {
  std::vector<int64_t> keys;
  std::set<uint32_t> seen;
  for (int64_t k = from; keys.size() < n; ++k) {
    uint32_t b = bucket_of_key(k);
    if (pred(b) && seen.insert(b).second) keys.push_back(k);
  }
  return keys;
}

// Keys of s0 in `n` distinct buckets (initially bucket b is on shard b mod 3), and the buckets.
struct Moving {
  std::vector<int64_t> keys;
  std::vector<uint32_t> buckets;
  std::string key_list() const {
    std::string out;
    for (int64_t k : keys) {
      if (!out.empty()) out += ',';
      out += std::to_string(k);
    }
    return out;
  }
};
inline Moving moving_on_s0(size_t n) {
  Moving m;
  m.keys = keys_in_distinct_buckets(n, [](uint32_t b) { return b % kShards == 0; });
  for (int64_t k : m.keys) m.buckets.push_back(bucket_of_key(k));
  return m;
}

// MOVE BUCKETS <buckets> TO <target>; the new migration's id.
inline std::string start_move(PgConn& admin, const std::vector<uint32_t>& buckets,
                              const std::string& target = "s1") {
  PgResult r = admin.exec("MOVE BUCKETS " + bucket_list(buckets) + " TO " + target);
  REQUIRE_MESSAGE(r.ok(), "MOVE BUCKETS -> " << r.describe());
  REQUIRE(r.rows() == 1);
  return r.value(0, 4);
}

// Rows of orders seeded directly on s0 for `k`: note 'seed-<i>', qty i.
inline void seed_orders(PgConn& s0, int64_t k, int rows) {
  REQUIRE_OK(s0.exec("INSERT INTO orders (tenant_id, note, qty) SELECT " + std::to_string(k) +
                     ", 'seed-' || g, g FROM generate_series(1, " + std::to_string(rows) + ") g"));
}

// moving_on_s0(n), each key seeded with `rows` orders on s0 (seed_orders).
inline Moving seed_moving_on_s0(PgConn& s0, size_t n, int rows) {
  Moving m = moving_on_s0(n);
  for (int64_t k : m.keys) seed_orders(s0, k, rows);
  return m;
}

// Waits until the migration's forward slot shows on s0 (the copy step has begun: commits on the
// source after the copy reach the stream) while SHOW MIGRATIONS says copying.
inline void wait_for_copy_start(const ShardedFixture& f, PgConn& admin, const std::string& id) {
  bool slot = wait_until([&] { return contains(slots_on(f, 0), "sw_mig_" + id); }, 20s, 10ms);
  REQUIRE_MESSAGE(slot, "no slot sw_mig_" << id << " on s0; migration: " << migration(admin, id)["state"]);
  auto row = migration(admin, id);
  REQUIRE_MESSAGE(row["state"] == "copying",
                  "the copy is over already (state " << row["state"] << "): it must be throttled longer");
}

// Every shard: no replication slot, no publication.
inline void check_no_slots_or_publications(const ShardedFixture& f) {
  for (int s = 0; s < f.setup.shards(); ++s) {
    INFO("shard s" << s);
    CHECK(slots_on(f, s) == "");
    CHECK(publications_on(f, s) == "");
  }
}

// The source owns the moving buckets (a move cancelled or aborted before the flip): ACTIVE on s0
// in the directory, unfenced on s0, fenced on the target s1.
inline void check_owned_by_s0(const ShardedFixture& f, const Moving& m) {
  CHECK(directory_of(f, m.buckets) == repeated("s0/ACTIVE", m.buckets.size()));
  CHECK(fenced_on(f, 0, m.buckets).empty());
  CHECK(fenced_on(f, 1, m.buckets) == std::set<uint32_t>(m.buckets.begin(), m.buckets.end()));
  CHECK(empty_fences_with_rows(f, 1) == "");
}

// The move is done: the buckets ACTIVE on s1, which holds `expected` (their rows on s0 before),
// and s0 holds none of their rows.
inline void check_moved_to_s1(const ShardedFixture& f, const Moving& m,
                              const std::vector<std::string>& expected) {
  CHECK(directory_of(f, m.buckets) == repeated("s1/ACTIVE", m.buckets.size()));
  CHECK(bucket_rows(f, 1, m.buckets) == expected);
  CHECK(bucket_rows(f, 0, m.buckets).empty());
  // The source's fences say so once its rows are deleted: scatter reads skip them.
  CHECK(holds_rows_on(f, 0, m.buckets) == repeated("f", m.buckets.size()));
}

}  // namespace it
