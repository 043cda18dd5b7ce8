// The reshard scenario's history checker: holds every shard's final rows, the catalog's
// directory and the write/flip logs of the deployment against what the workload's clients were
// told.
//
//  * every acknowledged write is present exactly once, on the owner of its bucket: an
//    acknowledged insert not later deleted is there once; an acknowledged delete's rows are gone;
//    qty equals the acknowledged increments (plus at most the unknown ones);
//  * no write that got an error is half-present: a pair's two rows are both present or both
//    absent, with equal qty; a failed insert left nothing;
//  * no row of a moved bucket was written on its source after the flip (the write log's last
//    application write on the source is older than the directory's owner change);
//  * the seed rows are all there, once, on their owners; the moved buckets are fenced on their
//    source, no bucket is left MIGRATING, no replication slot or publication is left;
//  * no stale read: a read that began after a write to its pair was acknowledged sees it (the
//    pair's insert, its acknowledged increments, its delete);
//  * figures: how many buckets and rows moved (the scenario asserts 20% +- 1%).
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness/reshard_deployment.h"
#include "harness/reshard_workload.h"

namespace it::reshard {

struct Report {
  size_t rows_total = 0;
  size_t rows_in_moved_buckets = 0;
  size_t moved_buckets = 0;
  std::set<uint32_t> moved_bucket_set;
  std::map<std::string, int> moves;  // "s0->s4" -> buckets
  size_t acknowledged = 0;           // committed transactions
  size_t lost = 0;                   // acknowledged rows missing, or seed rows missing
  size_t duplicated = 0;
  size_t half_present = 0;  // one row of a pair, or unequal qty
  size_t misplaced = 0;     // on a shard that does not own the bucket
  size_t wrong_qty = 0;
  size_t present_after_failure = 0;  // a failed insert's or acknowledged delete's rows present
  size_t written_after_flip = 0;
  size_t reads = 0;                   // answered reads checked
  size_t stale_reads = 0;             // missed a write acknowledged before the read began
  size_t leftovers = 0;               // fences, MIGRATING buckets, slots, publications, stray rows
  std::vector<std::string> problems;  // the first ones, described

  size_t problem_count() const {
    return lost + duplicated + half_present + misplaced + wrong_qty + present_after_failure +
           written_after_flip + leftovers + stale_reads;
  }
  double moved_row_share() const {
    return rows_total == 0 ? 0 : static_cast<double>(rows_in_moved_buckets) / static_cast<double>(rows_total);
  }
};

Report check_history(const Deployment& deployment, const Workload& workload);

// The scenario's figures, for MESSAGE and the README: buckets and rows moved, the cutover pauses,
// the latency of writes to moved and other buckets, client-visible errors by SQLSTATE, total
// time, peak lag, and the checker's counts.
// [from_s, to_s]: the rebalance, in workload time (Workload::elapsed_s()).
std::string format_figures(const Report& report, const Workload& workload, const MigrationWatch& watch,
                           double from_s, double to_s);

// The catch-up apply lag each migration's forward stream logged when it stopped (source commit to
// target commit; `mover: migration N apply lag ...`, with the steady part until the stream
// received each transaction), one line per migration, and the worst p99 of steady catch-up.
std::string format_apply_lag(Deployment& deployment, double* worst_p99_ms);

// Each forward cutover's log line: the pause and its steps in ms after the cutover began.
std::string format_cutover_steps(Deployment& deployment);

}  // namespace it::reshard
