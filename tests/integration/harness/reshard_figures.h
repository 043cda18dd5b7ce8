// The reshard benchmark's figures beyond the history checker's (tests/bench/reshard.sh): each
// copy's rate from the mover's log, the same kind of rows through a plain `COPY ... TO STDOUT |
// COPY ... FROM STDIN` pipe on the same cluster, each migration's cleanup time, each instance's
// memory.
#pragma once

#include <string>
#include <vector>

#include "harness/reshard_deployment.h"

namespace it::reshard {

// Rows and bytes copied and the seconds the copies took (summed over copies), and the wall time
// from the first copy's start to the last one's end (copies overlap).
struct CopyFigures {
  int copies = 0;
  long long rows = 0, bytes = 0;
  double seconds = 0;
  double wall_seconds = 0;
  double wall_rows_per_s() const { return wall_seconds > 0 ? static_cast<double>(rows) / wall_seconds : 0; }
  double rows_per_s() const { return seconds > 0 ? static_cast<double>(rows) / seconds : 0; }
  double mb_per_s() const { return seconds > 0 ? static_cast<double>(bytes) / 1e6 / seconds : 0; }
};

// Every forward copy the instances logged ("mover: copied N rows (B bytes) of K buckets from X to
// Y in T s").
CopyFigures mover_copies(Deployment& deployment);

// Shard `from`'s orders rows (all, or those `where` selects) through psql's COPY (binary) into a
// scratch copy of the table (its indexes included) on shard `to`, as one pipe; the scratch table
// is dropped after.
CopyFigures plain_copy_pipe(const Deployment& deployment, int from, int to, const std::string& where = "");

// `where` for plain_copy_pipe: the mover's bucket filter over every fifth bucket that shard
// `shard` owns now, at most `count` of them (the shape of a rebalance's copy from it).
std::string some_buckets_of(Deployment& deployment, int shard, int count);

// Per migration, the seconds from "rollback window closed" to "done" in the instances' logs (the
// deletion of the source's rows), and the rows deleted in all.
struct CleanupFigures {
  std::vector<double> seconds;
  long long rows_deleted = 0;
};
CleanupFigures cleanups(Deployment& deployment);

// "instance 0: VmRSS 41 MB, VmHWM 57 MB; instance 1: ..." from /proc.
std::string instance_memory(Deployment& deployment);

}  // namespace it::reshard
