#include "harness/reshard_figures.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "harness/process.h"

namespace it::reshard {
namespace {

// Seconds since the epoch of a log line's "2026-12-06T06:22:01.123Z" prefix; -1 when it has none.
double log_time(const std::string& line) {
  std::tm t{};
  int ms = 0;
  if (std::sscanf(line.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &t.tm_year, &t.tm_mon, &t.tm_mday, &t.tm_hour,
                  &t.tm_min, &t.tm_sec, &ms) != 7)
    return -1;
  t.tm_year -= 1900;
  t.tm_mon -= 1;
  return static_cast<double>(timegm(&t)) + ms / 1000.0;
}

// Every line of every instance's log.
std::vector<std::string> log_lines(Deployment& d) {
  std::vector<std::string> lines;
  for (int i = 0; i < kInstances; ++i) {
    std::istringstream in(d.instance(i).log());
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  return lines;
}

// The first number of /proc/<pid>/status's `key` line (kB).
long long status_kb(pid_t pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + ":", 0) == 0) return std::atoll(line.c_str() + key.size() + 1);
  return -1;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace

CopyFigures mover_copies(Deployment& d) {
  static const std::regex copied(
      R"(mover: copied (\d+) rows \((\d+) bytes\) of \d+ buckets from \S+ to \S+ in ([0-9.]+) s)");
  CopyFigures f;
  double first_start = -1, last_end = -1;
  for (const std::string& line : log_lines(d)) {
    std::smatch m;
    if (!std::regex_search(line, m, copied)) continue;
    ++f.copies;
    f.rows += std::stoll(m[1].str());
    f.bytes += std::stoll(m[2].str());
    const double seconds = std::stod(m[3].str()), end = log_time(line);
    f.seconds += seconds;
    if (first_start < 0 || end - seconds < first_start) first_start = end - seconds;
    last_end = std::max(last_end, end);
  }
  if (first_start >= 0) f.wall_seconds = last_end - first_start;
  return f;
}

CopyFigures plain_copy_pipe(const Deployment& d, int from, int to, const std::string& where) {
  const auto& cluster = d.setup().cluster();
  PgConn target = d.setup().shard(to);
  must(target.exec(
           "DROP TABLE IF EXISTS sw_bench_copy; CREATE TABLE sw_bench_copy (LIKE orders INCLUDING ALL)"),
       "scratch table on s" + std::to_string(to));
  const std::string psql = pg_bin("psql");
  // The byte count goes to stderr through a second reader of the stream.
  const std::string pipe = psql + " " + quoted(cluster.conninfo(d.setup().shard_db(from))) +
                           " -Xqc 'COPY (SELECT * FROM orders" + (where.empty() ? "" : " WHERE " + where) +
                           ") TO STDOUT (FORMAT binary)' | tee >(wc -c >&2) | " + psql + " " +
                           quoted(cluster.conninfo(d.setup().shard_db(to))) +
                           " -Xqc 'COPY sw_bench_copy FROM STDIN (FORMAT binary)'";
  const auto start = std::chrono::steady_clock::now();
  CommandResult r = run_command({"bash", "-c", pipe}, "", std::chrono::seconds(600));
  const auto end = std::chrono::steady_clock::now();
  if (r.exit_code != 0) throw std::runtime_error("COPY pipe: " + r.describe());
  CopyFigures f;
  f.copies = 1;
  f.rows = std::stoll(target.value("SELECT count(*) FROM sw_bench_copy"));
  f.bytes = std::atoll(r.err.c_str());
  f.seconds = std::chrono::duration<double>(end - start).count();
  must(target.exec("DROP TABLE sw_bench_copy"), "drop the scratch table");
  return f;
}

std::string some_buckets_of(Deployment& d, int shard, int count) {
  PgConn catalog = d.setup().catalog();
  const std::string list = catalog.value(
      "SELECT string_agg(bucket::text, ',') FROM (SELECT bucket FROM (SELECT bucket, row_number() OVER "
      "(ORDER BY bucket) AS n FROM shardwire.buckets WHERE shard = 's" +
      std::to_string(shard) + "') x WHERE n % 5 = 1 ORDER BY bucket LIMIT " + std::to_string(count) + ") y");
  return "shardwire.bucket_of(tenant_id::bigint, 4096) = ANY(ARRAY[" + list +
         "])";  // no quotes: in a shell word
}

CleanupFigures cleanups(Deployment& d) {
  static const std::regex closed(R"(mover: migration (\d+): rollback window closed)");
  static const std::regex done(R"(mover: migration (\d+) done: (\d+) rows deleted)");
  std::map<std::string, double> closed_at, done_at;
  CleanupFigures f;
  for (const std::string& line : log_lines(d)) {
    std::smatch m;
    if (std::regex_search(line, m, closed)) closed_at[m[1].str()] = log_time(line);
    if (std::regex_search(line, m, done)) {
      done_at[m[1].str()] = log_time(line);
      f.rows_deleted += std::stoll(m[2].str());
    }
  }
  for (const auto& [id, at] : done_at)
    if (closed_at.count(id) && at >= 0 && closed_at[id] >= 0) f.seconds.push_back(at - closed_at[id]);
  return f;
}

std::string instance_memory(Deployment& d) {
  std::ostringstream out;
  for (int i = 0; i < kInstances; ++i) {
    const pid_t pid = d.instance(i).pid();
    out << (i ? "; " : "") << "instance " << i << ": VmRSS " << status_kb(pid, "VmRSS") / 1024
        << " MB, VmHWM " << status_kb(pid, "VmHWM") / 1024 << " MB";
  }
  return out.str();
}

}  // namespace it::reshard
