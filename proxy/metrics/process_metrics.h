// The standard process_* metrics (as the Prometheus client libraries define them), which
// prometheus-cpp does not provide. Read from /proc on every scrape; Linux only.
#pragma once

#include <optional>
#include <string>

namespace sw::metrics {

struct ProcessReadings {
  // Each value is absent when its /proc file could not be read or parsed; absent values are not
  // exported (a missing series is better than a wrong 0).
  std::optional<double> cpu_seconds;         // utime + stime of /proc/self/stat, in seconds
  std::optional<double> resident_bytes;      // rss pages * page size
  std::optional<double> virtual_bytes;       // vsize
  std::optional<double> open_fds;            // entries of /proc/self/fd
  std::optional<double> max_fds;             // soft "Max open files" of /proc/self/limits
  std::optional<double> start_time_seconds;  // Unix time: btime of /proc/stat + starttime
};

// Reads the calling process's values. Never throws.
ProcessReadings read_process_metrics();

// The same from given file contents (proc_root is "/proc" in production; tests pass a fake
// tree). `self` names the process directory under proc_root ("self" or a pid).
ProcessReadings read_process_metrics(const std::string& proc_root, const std::string& self);

}  // namespace sw::metrics
