// The reshard scenario's write workload: clients spread over several shardwire instances insert,
// update and delete pairs of rows on random keys (so over all buckets), each recording every
// transaction it sent and the answer it got. A third of a client's turns read a pair another
// client wrote (so mostly through the other instance), for the stale-read check. The history is what the
// checker (reshard_checker.h) holds the shards to.
//
// A pair is two rows of one tenant (notes "<note>/a" and "<note>/b") that are only ever written
// together, in one transaction: inserted, incremented (qty + 1 on both) or deleted. So after any
// fault both rows are present or both absent, with equal qty; a half-present pair is a broken
// transaction.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace it::reshard {

// Definite outcomes are Ok (COMMIT acknowledged) and Failed (an error before COMMIT was sent, or
// COMMIT answered ROLLBACK). Unknown: COMMIT was sent and no answer came back.
enum class Outcome { Ok, Failed, Unknown };

enum class OpKind { Insert, Update, Delete };

struct Op {
  OpKind kind;
  size_t pair;  // index into Workload::pairs()
  uint32_t bucket;
  double start_s;     // since the workload started
  double latency_ms;  // BEGIN sent .. COMMIT (or the failing statement) answered
  Outcome outcome;
  std::string sqlstate;  // of the error; "" when there was none ("-" for a lost connection)
};

// A read of another client's pair (one row, "<note>/a"), autocommit, through the reader's instance.
struct Read {
  std::string note;  // the pair's
  uint32_t bucket;
  double start_s;  // since the workload started
  double end_s;
  bool ok;     // answered without an error
  bool found;  // the row was there
  int qty;
  std::string sqlstate;  // of the error
};

struct Pair {
  int64_t tenant;
  std::string note;
  Outcome insert = Outcome::Unknown;
  int increments_ok = 0;
  int increments_unknown = 0;
  std::optional<Outcome> deleted;  // set once a DELETE was Ok or Unknown
};

// Which shardwire instance a client talks to: conninfo_of(i) for instance i (the instances may be
// restarted underneath; a client that loses its connection reconnects, to the next instance when
// its own does not answer).
struct WorkloadOptions {
  int clients = 8;
  int instances = 2;
  std::function<std::string(int instance)> conninfo_of;
  uint64_t seed = 1;
  // Between a client's transactions: an open-loop-like pace instead of saturating the machine
  // (the scenario is about correctness; tests/bench/reshard.sh can set 0).
  int think_ms = 5;
};

class Workload {
 public:
  explicit Workload(WorkloadOptions options);
  ~Workload();
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  void start();
  void stop();  // joins the clients

  double elapsed_s() const;
  // Valid after stop().
  const std::vector<Pair>& pairs() const { return pairs_; }
  const std::vector<Op>& ops() const { return ops_; }
  const std::vector<Read>& reads() const { return reads_; }
  // Command tags that contradict the history (an UPDATE of a live pair touching other than 2
  // rows, ...): each is a lost or duplicated row seen by a client.
  const std::vector<std::string>& anomalies() const { return anomalies_; }
  size_t committed() const;

 private:
  struct Client;
  void run_client(int index);
  // One read of a pair announced by another client; false when there is none yet.
  bool read_other(Client& c);

  WorkloadOptions options_;
  std::atomic<bool> stopping_{false};
  std::vector<std::thread> threads_;
  std::mutex mutex_;  // guards pairs_, ops_, anomalies_
  std::vector<Pair> pairs_;
  std::vector<Op> ops_;
  std::vector<std::string> anomalies_;
  std::vector<Read> reads_;
  std::mutex announced_mutex_;
  // Pairs whose insert was acknowledged: (client, tenant, note), for other clients to read.
  std::vector<std::tuple<int, int64_t, std::string>> announced_;
  int64_t started_ns_ = 0;
};

// p-th percentile (0..100) of `values` (nearest rank); 0 for none.
double percentile(std::vector<double> values, double p);

}  // namespace it::reshard
