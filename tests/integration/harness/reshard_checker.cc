#include "harness/reshard_checker.h"

#include <algorithm>
#include <iomanip>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "harness/sharded_fixture.h"

namespace it::reshard {
namespace {

struct Found {
  int shard;
  int64_t tenant;
  long long qty;
};

void problem(Report& report, size_t& counter, const std::string& what) {
  ++counter;
  if (report.problems.size() < 20) report.problems.push_back(what);
}

// Every row of every shard, by note ("seed" rows by tenant).
struct Rows {
  std::map<std::string, std::vector<Found>> by_note;
  std::map<int64_t, std::vector<Found>> seeds;
};

Rows read_rows(const Deployment& d, const std::set<uint32_t>& moved, Report& report) {
  Rows rows;
  for (int s = 0; s < d.all_shards(); ++s) {
    PgConn c = d.setup().shard(s);
    PgResult r = must(c.exec("SELECT tenant_id, note, qty FROM orders", std::chrono::seconds(120)),
                      "rows of s" + std::to_string(s));
    for (const auto& row : r.data()) {
      Found f{s, std::stoll(row.at(0)), std::stoll(row.at(2))};
      ++report.rows_total;
      if (moved.count(bucket_of_key(f.tenant))) ++report.rows_in_moved_buckets;
      if (row.at(1) == "seed")
        rows.seeds[f.tenant].push_back(f);
      else
        rows.by_note[row.at(1)].push_back(f);
    }
  }
  return rows;
}

// "3,17,..." of the buckets that moved away from shard s.
std::string moved_from_shard(const std::map<uint32_t, int>& moved_from, int s) {
  std::string list;
  for (const auto& [b, from] : moved_from)
    if (from == s) list += (list.empty() ? "" : ",") + std::to_string(b);
  return list;
}

std::string pair_name(const Pair& p) {
  return "pair " + p.note + " (tenant " + std::to_string(p.tenant) + ")";
}

void check_pair(const Pair& p, const Rows& rows, const std::map<uint32_t, int>& owner, Report& report) {
  static const std::vector<Found> kNone;
  auto at = [&](const std::string& note) -> const std::vector<Found>& {
    auto it = rows.by_note.find(note);
    return it == rows.by_note.end() ? kNone : it->second;
  };
  const auto& a = at(p.note + "/a");
  const auto& b = at(p.note + "/b");
  if (a.size() > 1 || b.size() > 1)
    return problem(report, report.duplicated, pair_name(p) + " present more than once");
  if (a.size() != b.size())
    return problem(report, report.half_present, pair_name(p) + ": one row of two present");
  if (a.empty()) {
    if (p.insert == Outcome::Ok && !p.deleted)
      problem(report, report.lost, pair_name(p) + ": acknowledged, missing");
    return;
  }
  const int expected = owner.at(bucket_of_key(p.tenant));
  if (a[0].shard != expected || b[0].shard != expected || a[0].tenant != p.tenant || b[0].tenant != p.tenant)
    problem(report, report.misplaced,
            pair_name(p) + " on s" + std::to_string(a[0].shard) + ", owner s" + std::to_string(expected));
  if (p.insert == Outcome::Failed)
    problem(report, report.present_after_failure, pair_name(p) + ": insert failed, rows present");
  if (p.deleted == Outcome::Ok)
    problem(report, report.present_after_failure, pair_name(p) + ": delete acknowledged, rows present");
  if (a[0].qty != b[0].qty)
    problem(report, report.half_present, pair_name(p) + ": qty differs between its rows");
  if (a[0].qty < p.increments_ok || a[0].qty > p.increments_ok + p.increments_unknown)
    problem(report, report.wrong_qty,
            pair_name(p) + ": qty " + std::to_string(a[0].qty) + ", acknowledged increments " +
                std::to_string(p.increments_ok));
}

void check_seeds(const Deployment& d, const Rows& rows, const std::map<uint32_t, int>& owner,
                 Report& report) {
  for (int64_t key : d.seed_keys()) {
    auto it = rows.seeds.find(key);
    const size_t n = it == rows.seeds.end() ? 0 : it->second.size();
    if (n != 1) {
      problem(report, n == 0 ? report.lost : report.duplicated,
              "seed row " + std::to_string(key) + " present " + std::to_string(n) + " times");
    } else if (it->second[0].shard != owner.at(bucket_of_key(key))) {
      problem(report, report.misplaced,
              "seed row " + std::to_string(key) + " on s" + std::to_string(it->second[0].shard));
    }
  }
  if (rows.seeds.size() != d.seed_keys().size())
    problem(report, report.leftovers,
            std::to_string(rows.seeds.size()) + " seed tenants found, " +
                std::to_string(d.seed_keys().size()) + " seeded");
}

// The last application write of each moved bucket on its source must be older than the bucket's
// owner change in the directory.
void check_writes_after_flip(const Deployment& d, const std::map<uint32_t, int>& moved_from,
                             const std::map<uint32_t, int>& owner, Report& report) {
  std::map<uint32_t, long long> flipped_at;  // microseconds since the epoch
  PgConn catalog = d.setup().catalog();
  PgResult flips =
      must(catalog.exec("SELECT bucket, substr(shard, 2)::int, (extract(epoch FROM max(at)) * 1e6)::bigint "
                        "FROM sw_test_flips GROUP BY 1, 2"),
           "flip log");
  for (const auto& row : flips.data()) {
    uint32_t b = static_cast<uint32_t>(std::stoul(row.at(0)));
    if (owner.at(b) == std::stoi(row.at(1))) flipped_at[b] = std::stoll(row.at(2));
  }
  for (int s = 0; s < d.old_shards(); ++s) {
    const std::string list = moved_from_shard(moved_from, s);
    if (list.empty()) continue;
    PgConn c = d.setup().shard(s);
    PgResult last =
        must(c.exec("SELECT bucket, (extract(epoch FROM max(at)) * 1e6)::bigint FROM sw_test_writes "
                    "WHERE bucket = ANY('{" +
                    list + "}') GROUP BY 1"),
             "write log of s" + std::to_string(s));
    for (const auto& row : last.data()) {
      uint32_t b = static_cast<uint32_t>(std::stoul(row.at(0)));
      auto flip = flipped_at.find(b);
      if (flip == flipped_at.end())
        problem(report, report.leftovers, "bucket " + row.at(0) + " changed owner without a logged flip");
      else if (std::stoll(row.at(1)) >= flip->second)
        problem(report, report.written_after_flip,
                "bucket " + row.at(0) + " written on s" + std::to_string(s) + " " +
                    std::to_string(std::stoll(row.at(1)) - flip->second) + " us after its flip");
    }
  }
}

void check_leftovers(const Deployment& d, const std::map<uint32_t, int>& moved_from, Report& report) {
  PgConn catalog = d.setup().catalog();
  std::string not_active = catalog.value("SELECT count(*) FROM shardwire.buckets WHERE state <> 'ACTIVE'");
  if (not_active != "0")
    problem(report, report.leftovers, not_active + " buckets not ACTIVE in the directory");
  for (int s = 0; s < d.all_shards(); ++s) {
    PgConn c = d.setup().shard(s);
    std::string slots =
        c.value("SELECT count(*) FROM pg_replication_slots WHERE database = current_database()");
    std::string pubs = c.value("SELECT count(*) FROM pg_publication");
    if (slots != "0" || pubs != "0")
      problem(report, report.leftovers,
              "s" + std::to_string(s) + ": " + slots + " slots, " + pubs + " publications left");
    // A fence saying "no rows" over rows of its bucket: scatter reads would count them there.
    std::string hidden = c.value(
        "SELECT count(*) FROM shardwire.fenced_buckets f WHERE NOT f.holds_rows AND EXISTS (SELECT 1 "
        "FROM orders o WHERE shardwire.bucket_of(o.tenant_id, " +
        std::to_string(d.buckets()) + ") = f.bucket)");
    if (hidden != "0")
      problem(report, report.leftovers,
              "s" + std::to_string(s) + ": " + hidden +
                  " fences say holds_rows = false over rows of their bucket");
    const std::string list = moved_from_shard(moved_from, s);
    if (list.empty()) continue;
    std::string unfenced = c.value("SELECT count(*) FROM unnest('{" + list +
                                   "}'::int[]) b WHERE b NOT IN "
                                   "(SELECT bucket FROM shardwire.fenced_buckets)");
    if (unfenced != "0")
      problem(report, report.leftovers,
              "s" + std::to_string(s) + ": " + unfenced + " moved buckets not fenced");
  }
}

// A read that began at T (an answer, not an error) must see every write to its pair acknowledged
// before T: the insert (unless a delete that may have applied began before the read ended), each
// acknowledged increment (qty can only be higher: unknown increments add), and the delete.
void check_reads(const Workload& w, Report& report) {
  std::map<std::string, size_t> pair_of;
  for (size_t i = 0; i < w.pairs().size(); ++i) pair_of[w.pairs()[i].note] = i;
  std::map<size_t, std::vector<const Op*>> ops_of;
  for (const Op& op : w.ops()) ops_of[op.pair].push_back(&op);
  for (const Read& read : w.reads()) {
    if (!read.ok) continue;
    ++report.reads;
    const size_t pair = pair_of.at(read.note);
    bool inserted = false, deleted = false, maybe_deleted = false;
    int increments = 0;
    for (const Op* op : ops_of[pair]) {
      const double acked_s = op->start_s + op->latency_ms / 1000.0;
      const bool before = op->outcome == Outcome::Ok && acked_s < read.start_s;
      if (op->kind == OpKind::Insert) inserted = inserted || before;
      if (op->kind == OpKind::Update) increments += before ? 1 : 0;
      if (op->kind == OpKind::Delete) {
        deleted = deleted || before;
        maybe_deleted = maybe_deleted || (op->outcome != Outcome::Failed && op->start_s < read.end_s);
      }
    }
    std::string why;
    if (read.found && deleted) why = "saw a row deleted before it began";
    if (read.found && read.qty < increments)
      why = "saw qty " + std::to_string(read.qty) + " after " + std::to_string(increments) +
            " acknowledged increments";
    if (!read.found && inserted && !maybe_deleted) why = "missed a row inserted before it began";
    if (!why.empty())
      problem(report, report.stale_reads,
              "read of " + read.note + " (bucket " + std::to_string(read.bucket) + ") at " +
                  std::to_string(read.start_s) + " s " + why);
  }
}

}  // namespace

Report check_history(const Deployment& d, const Workload& w) {
  Report report;
  const std::map<uint32_t, int> owner = d.directory();
  std::map<uint32_t, int> moved_from;
  for (const auto& [b, shard] : d.initial_directory()) {
    if (owner.at(b) == shard) continue;
    moved_from[b] = shard;
    ++report.moves["s" + std::to_string(shard) + "->s" + std::to_string(owner.at(b))];
  }
  report.moved_buckets = moved_from.size();
  for (const auto& [b, from] : moved_from) report.moved_bucket_set.insert(b);

  Rows rows = read_rows(d, report.moved_bucket_set, report);
  report.acknowledged = w.committed();
  std::set<std::string> notes;
  for (const Pair& p : w.pairs()) {
    check_pair(p, rows, owner, report);
    notes.insert(p.note + "/a");
    notes.insert(p.note + "/b");
  }
  for (const auto& [note, found] : rows.by_note)
    if (!notes.count(note)) problem(report, report.leftovers, "row with note " + note + " was never written");
  check_seeds(d, rows, owner, report);
  check_writes_after_flip(d, moved_from, owner, report);
  check_leftovers(d, moved_from, report);
  check_reads(w, report);
  return report;
}

std::string format_figures(const Report& report, const Workload& workload, const MigrationWatch& watch,
                           double from_s, double to_s) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(1);
  out << "buckets moved: " << report.moved_buckets << " (";
  for (const auto& [move, n] : report.moves) out << move << " " << n << "; ";
  out << "), rows in them: " << report.rows_in_moved_buckets << " of " << report.rows_total << " ("
      << 100.0 * report.moved_row_share() << "%)\n";
  std::vector<double> pauses;
  for (auto& [id, row] : watch.migrations())
    if (!row["last_pause_ms"].empty()) pauses.push_back(std::stod(row["last_pause_ms"]));
  out << "cutover pause per migration (last_pause_ms, " << pauses.size() << " migrations): p50 "
      << percentile(pauses, 50) << " ms, max " << percentile(pauses, 100) << " ms\n";
  std::vector<double> moving, other;
  std::map<std::string, int> errors;
  size_t failed = 0, unknown = 0;
  for (const Op& op : workload.ops()) {
    if (op.outcome != Outcome::Ok) {
      ++(op.outcome == Outcome::Failed ? failed : unknown);
      ++errors[op.sqlstate];
    }
    if (op.start_s < from_s || op.start_s > to_s || op.outcome != Outcome::Ok) continue;
    (report.moved_bucket_set.count(op.bucket) ? moving : other).push_back(op.latency_ms);
  }
  // A bucket's write pause: the longest a write to it waited during the rebalance (its cutover
  // holds new writes), over the moved buckets that took writes then.
  std::map<uint32_t, double> longest;
  for (const Op& op : workload.ops())
    if (op.outcome == Outcome::Ok && op.start_s >= from_s && op.start_s <= to_s &&
        report.moved_bucket_set.count(op.bucket))
      longest[op.bucket] = std::max(longest[op.bucket], op.latency_ms);
  std::vector<double> per_bucket;
  for (const auto& [bucket, ms] : longest) per_bucket.push_back(ms);
  out << "per-bucket write pause (longest write to each moved bucket, " << per_bucket.size()
      << " buckets): p50 " << percentile(per_bucket, 50) << " / p99 " << percentile(per_bucket, 99)
      << " / max " << percentile(per_bucket, 100) << " ms\n";
  out << "write latency during the rebalance, moved buckets: " << moving.size() << " tx, p50 "
      << percentile(moving, 50) << " / p99 " << percentile(moving, 99) << " / max " << percentile(moving, 100)
      << " ms; other buckets: " << other.size() << " tx, p50 " << percentile(other, 50) << " / p99 "
      << percentile(other, 99) << " / max " << percentile(other, 100) << " ms\n";
  out << "transactions: " << workload.ops().size() << ", committed " << report.acknowledged << ", failed "
      << failed << ", unknown outcome " << unknown << "; errors by SQLSTATE:";
  for (const auto& [state, n] : errors) out << " " << state << "=" << n;
  if (errors.empty()) out << " none";
  std::map<std::string, int> read_errors;
  for (const Read& read : workload.reads())
    if (!read.ok) ++read_errors[read.sqlstate];
  out << "\nreads: " << workload.reads().size() << "; errors by SQLSTATE:";
  for (const auto& [state, n] : read_errors) out << " " << state << "=" << n;
  if (read_errors.empty()) out << " none";
  out << "\nrebalance: " << (to_s - from_s) << " s; peak lag " << watch.peak_lag_bytes() << " bytes / "
      << watch.peak_lag_seconds() << " s\n";
  out << "checker: lost " << report.lost << ", duplicated " << report.duplicated << ", half-present "
      << report.half_present << ", misplaced " << report.misplaced << ", wrong qty " << report.wrong_qty
      << ", present after failure " << report.present_after_failure << ", written after flip "
      << report.written_after_flip << ", leftovers " << report.leftovers << ", stale reads "
      << report.stale_reads << " of " << report.reads << " reads\n";
  for (const std::string& p : report.problems) out << "  " << p << "\n";
  return out.str();
}

std::string format_apply_lag(Deployment& d, double* worst_p99_ms) {
  static const std::regex line(
      R"(mover: migration (\d+) apply lag \(source commit to target commit\) in steady catch-up over (\d+) )"
      R"(transaction\(s\): p50 ([0-9.]+) ms, p99 ([0-9.]+) ms, max ([0-9.]+) ms; with the copy's backlog )"
      R"(over (\d+): p50 ([0-9.]+) ms, p99 ([0-9.]+) ms, max ([0-9.]+) ms; )"
      R"(steady, source commit to the stream receiving it: p50 ([0-9.]+) ms, p99 ([0-9.]+) ms, max ([0-9.]+) ms)");
  std::ostringstream out;
  *worst_p99_ms = 0;
  int migrations = 0;
  for (int i = 0; i < kInstances; ++i) {
    const std::string log = d.instance(i).log();
    for (std::sregex_iterator it(log.begin(), log.end(), line), end; it != end; ++it) {
      const std::smatch& m = *it;
      ++migrations;
      *worst_p99_ms = std::max(*worst_p99_ms, std::stod(m[4].str()));
      out << "  migration " << m[1] << ": steady " << m[2] << " transactions, p50 " << m[3] << " / p99 "
          << m[4] << " / max " << m[5] << " ms; with the copy's backlog " << m[6] << " transactions, p50 "
          << m[7] << " / p99 " << m[8] << " / max " << m[9] << " ms; steady until received p50 " << m[10]
          << " / p99 " << m[11] << " / max " << m[12] << " ms\n";
    }
  }
  std::ostringstream head;
  head << "catch-up apply lag (source commit to target commit), " << migrations
       << " forward streams (worst steady p99 " << std::fixed << std::setprecision(1) << *worst_p99_ms
       << " ms):\n";
  return head.str() + out.str();
}

std::string format_cutover_steps(Deployment& d) {
  static const std::regex line(R"(mover: migration \d+: \d+ bucket\(s\) now on s\d+; writes paused .*)");
  std::string out = "cutovers (pause; steps in ms after the cutover began):\n";
  for (int i = 0; i < kInstances; ++i) {
    const std::string log = d.instance(i).log();
    for (std::sregex_iterator it(log.begin(), log.end(), line), end; it != end; ++it)
      out += "  " + it->str() + "\n";
  }
  return out;
}

}  // namespace it::reshard
