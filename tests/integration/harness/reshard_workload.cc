#include "harness/reshard_workload.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "harness/pg_client.h"
#include "harness/sharded_fixture.h"

namespace it::reshard {
namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string row_note(const Pair& pair, char half) { return pair.note + "/" + half; }

}  // namespace

// One client's own pairs and ops; merged into the workload's when the client ends.
struct Workload::Client {
  int index;
  std::mt19937_64 rng;
  PgConn conn;
  int instance;
  std::vector<Pair> pairs;
  std::vector<Op> ops;
  std::vector<std::string> anomalies;
  std::vector<Read> reads;
};

Workload::Workload(WorkloadOptions options) : options_(std::move(options)) {}

Workload::~Workload() { stop(); }

void Workload::start() {
  started_ns_ = now_ns();
  for (int i = 0; i < options_.clients; ++i) threads_.emplace_back([this, i] { run_client(i); });
}

void Workload::stop() {
  stopping_ = true;
  for (auto& t : threads_) t.join();
  threads_.clear();
}

double Workload::elapsed_s() const { return static_cast<double>(now_ns() - started_ns_) / 1e9; }

size_t Workload::committed() const {
  return static_cast<size_t>(
      std::count_if(ops_.begin(), ops_.end(), [](const Op& op) { return op.outcome == Outcome::Ok; }));
}

namespace {

// Runs BEGIN; statements (each must answer `tags[i]`); COMMIT. A statement that fails or answers
// another tag ends the transaction (ROLLBACK) as Failed: nothing was committed. `anomaly` gets a
// description when a statement succeeded with an unexpected tag.
Outcome run_transaction(PgConn& conn, const std::vector<std::string>& statements,
                        const std::vector<std::string>& tags, std::string* sqlstate, std::string* anomaly) {
  auto failed = [&](const PgResult& r) {
    *sqlstate = r.sqlstate().empty() ? "-" : r.sqlstate();
    // Every failure is printed with its message: the summary counts SQLSTATEs only.
    std::fprintf(stderr, "workload: transaction failed: %s %s\n", sqlstate->c_str(), r.error().c_str());
    if (conn && PQtransactionStatus(conn.get()) != PQTRANS_IDLE)
      conn.exec("ROLLBACK", std::chrono::seconds(10));
    return Outcome::Failed;
  };
  PgResult begin = conn.exec("BEGIN", std::chrono::seconds(30));
  if (!begin.ok()) return failed(begin);
  for (size_t i = 0; i < statements.size(); ++i) {
    PgResult r = conn.exec(statements[i], std::chrono::seconds(30));
    if (!r.ok()) return failed(r);
    if (r.command_tag() != tags[i]) {
      *anomaly = statements[i] + " -> " + r.command_tag() + " (expected " + tags[i] + ")";
      return failed(r);
    }
  }
  PgResult commit = conn.exec("COMMIT", std::chrono::seconds(30));
  if (commit.ok()) {
    if (commit.command_tag() == "COMMIT") return Outcome::Ok;
    *sqlstate = "ROLLBACK";
    return Outcome::Failed;
  }
  *sqlstate = commit.sqlstate().empty() ? "-" : commit.sqlstate();
  return Outcome::Unknown;
}

}  // namespace

bool Workload::read_other(Client& c) {
  int64_t tenant = 0;
  Read read{};
  {
    std::lock_guard<std::mutex> lock(announced_mutex_);
    if (announced_.empty()) return false;
    const auto& [client, key, note] = announced_[c.rng() % announced_.size()];
    if (client == c.index) return false;
    tenant = key;
    read.note = note;
  }
  read.bucket = bucket_of_key(tenant);
  read.start_s = static_cast<double>(now_ns() - started_ns_) / 1e9;
  PgResult r = c.conn.exec("SELECT qty FROM orders WHERE tenant_id = " + std::to_string(tenant) +
                               " AND note = '" + read.note + "/a'",
                           std::chrono::seconds(30));
  read.end_s = static_cast<double>(now_ns() - started_ns_) / 1e9;
  read.ok = r.ok();
  read.found = r.ok() && r.rows() == 1;
  read.qty = read.found ? std::stoi(r.value()) : 0;
  if (!r.ok()) {
    read.sqlstate = r.sqlstate().empty() ? "-" : r.sqlstate();
    std::fprintf(stderr, "workload: read failed: %s %s\n", read.sqlstate.c_str(), r.error().c_str());
  }
  c.reads.push_back(std::move(read));
  return true;
}

void Workload::run_client(int index) {
  Client c{index,    std::mt19937_64(options_.seed * 1000003 + static_cast<uint64_t>(index)),
           PgConn(), index % options_.instances,
           {},       {},
           {}};
  std::vector<size_t> live;  // of c.pairs: inserted (Ok) and not deleted
  for (int seq = 0; !stopping_; ++seq) {
    if (!c.conn) {
      ConnectResult r = connect(options_.conninfo_of(c.instance), std::chrono::seconds(2));
      if (!r.ok) {
        c.instance = (c.instance + 1) % options_.instances;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        continue;
      }
      c.conn = std::move(r.conn);
    }
    if (c.rng() % 3 == 0 && read_other(c)) {
      if (PQstatus(c.conn.get()) != CONNECTION_OK) c.conn.reset();
      if (options_.think_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(options_.think_ms));
      continue;
    }
    const uint64_t dice = c.rng() % 10;
    Op op{};
    std::vector<std::string> statements, tags;
    if (live.empty() || dice < 5) {
      Pair pair;
      pair.tenant = static_cast<int64_t>(c.rng());
      pair.note = "c" + std::to_string(index) + "-" + std::to_string(seq);
      for (char half : {'a', 'b'}) {
        statements.push_back("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(pair.tenant) +
                             ", '" + row_note(pair, half) + "')");
        tags.push_back("INSERT 0 1");
      }
      c.pairs.push_back(pair);
      op.kind = OpKind::Insert;
      op.pair = c.pairs.size() - 1;
    } else {
      const size_t slot = c.rng() % live.size();
      op.pair = live[slot];
      const Pair& pair = c.pairs[op.pair];
      const std::string where = " WHERE tenant_id = " + std::to_string(pair.tenant) + " AND note IN ('" +
                                row_note(pair, 'a') + "', '" + row_note(pair, 'b') + "')";
      op.kind = dice < 8 ? OpKind::Update : OpKind::Delete;
      statements.push_back(op.kind == OpKind::Update ? "UPDATE orders SET qty = qty + 1" + where
                                                     : "DELETE FROM orders" + where);
      tags.push_back(op.kind == OpKind::Update ? "UPDATE 2" : "DELETE 2");
    }
    Pair& pair = c.pairs[op.pair];
    op.bucket = bucket_of_key(pair.tenant);
    const int64_t start = now_ns();
    op.start_s = static_cast<double>(start - started_ns_) / 1e9;
    std::string anomaly;
    op.outcome = run_transaction(c.conn, statements, tags, &op.sqlstate, &anomaly);
    op.latency_ms = static_cast<double>(now_ns() - start) / 1e6;
    if (!anomaly.empty()) c.anomalies.push_back("client " + std::to_string(index) + ": " + anomaly);
    switch (op.kind) {
      case OpKind::Insert:
        pair.insert = op.outcome;
        if (op.outcome == Outcome::Ok) {
          live.push_back(op.pair);
          std::lock_guard<std::mutex> lock(announced_mutex_);
          announced_.emplace_back(index, pair.tenant, pair.note);
        }
        break;
      case OpKind::Update:
        if (op.outcome == Outcome::Ok) ++pair.increments_ok;
        if (op.outcome == Outcome::Unknown) ++pair.increments_unknown;
        break;
      case OpKind::Delete:
        if (op.outcome != Outcome::Failed) {
          pair.deleted = op.outcome;
          live.erase(std::find(live.begin(), live.end(), op.pair));
        }
        break;
    }
    c.ops.push_back(op);
    if (PQstatus(c.conn.get()) != CONNECTION_OK) c.conn.reset();
    if (options_.think_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(options_.think_ms));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t offset = pairs_.size();
  pairs_.insert(pairs_.end(), c.pairs.begin(), c.pairs.end());
  for (Op& op : c.ops) {
    op.pair += offset;
    ops_.push_back(op);
  }
  anomalies_.insert(anomalies_.end(), c.anomalies.begin(), c.anomalies.end());
  reads_.insert(reads_.end(), c.reads.begin(), c.reads.end());
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(p / 100.0 * static_cast<double>(values.size()) + 0.999999);
  rank = std::clamp<size_t>(rank, 1, values.size());
  return values[rank - 1];
}

}  // namespace it::reshard
