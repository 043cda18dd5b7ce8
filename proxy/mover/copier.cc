#include "mover/copier.h"

#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "common/log.h"
#include "mover/binary_tuple_counter.h"

namespace sw::mover {
namespace {

using Clock = std::chrono::steady_clock;
using catalog::PgConnPtr;
using catalog::PgResultPtr;

constexpr auto kProgressInterval = std::chrono::milliseconds(500);
constexpr auto kCancelPoll = std::chrono::milliseconds(100);
constexpr const char* kCanceled = "57014";  // a stream stopped by a cancel or another stream's failure

// Shared by every table and stream of one copy_buckets call: totals, the rate limit (over all
// streams together), progress reports, and the stop that one stream's failure gives the others.
// Thread-safe; on_progress is called under its lock, so never by two streams at once.
class CopyPacer {
 public:
  explicit CopyPacer(const CopyOptions& options)
      : options_(options), start_(Clock::now()), last_report_(start_) {}

  bool canceled() const {
    return failed_.load(std::memory_order_relaxed) ||
           (options_.cancel && options_.cancel->load(std::memory_order_relaxed));
  }
  // A stream failed: the others stop as if canceled.
  void fail() { failed_.store(true); }

  // Accounts one piece of COPY data, reports progress when due and sleeps while the copy is ahead
  // of rows_per_sec. False when canceled.
  bool account(uint64_t rows, uint64_t bytes) {
    Clock::time_point due;
    {
      std::lock_guard<std::mutex> lock(mu_);
      progress_.rows += rows;
      progress_.bytes += bytes;
      report_when_due();
      if (options_.rows_per_sec <= 0) return true;
      due = start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                         static_cast<double>(progress_.rows) / static_cast<double>(options_.rows_per_sec)));
    }
    // Sleep in slices so a cancel is seen; skip tiny sleeps (they cost more than they pace).
    for (auto now = Clock::now(); due - now > std::chrono::milliseconds(5); now = Clock::now()) {
      if (canceled()) return false;
      std::this_thread::sleep_for(std::min<Clock::duration>(due - now, kCancelPoll));
      std::lock_guard<std::mutex> lock(mu_);
      report_when_due();
    }
    return true;
  }

  void report() {
    std::lock_guard<std::mutex> lock(mu_);
    report_locked();
  }

  CopyProgress progress() const {
    std::lock_guard<std::mutex> lock(mu_);
    return progress_;
  }

 private:
  void report_when_due() {
    if (options_.on_progress && Clock::now() - last_report_ >= kProgressInterval) report_locked();
  }
  void report_locked() {
    last_report_ = Clock::now();
    if (options_.on_progress) options_.on_progress(progress_);
  }

  const CopyOptions& options_;
  const Clock::time_point start_;
  mutable std::mutex mu_;  // guards last_report_, progress_
  Clock::time_point last_report_;
  CopyProgress progress_;
  std::atomic<bool> failed_{false};
};

const char* format_clause(CopyFormat format) {
  return format == CopyFormat::Binary ? " (FORMAT binary)" : " (FORMAT text)";
}

// Asks the server to stop the running statement (best effort; the connection is dropped next).
void cancel_running_statement(PGconn* conn) {
  if (PGcancel* cancel = PQgetCancel(conn)) {
    char error[256];
    PQcancel(cancel, error, sizeof error);
    PQfreeCancel(cancel);
  }
}

// Ends a target transaction that failed or was canceled; while in COPY IN, aborts the COPY first.
void abandon_target(PGconn* target, bool in_copy) {
  if (in_copy) {
    PQputCopyEnd(target, "shardwire copy abandoned");
    while (PGresult* res = PQgetResult(target)) PQclear(res);
  }
  PQclear(PQexec(target, "ROLLBACK"));
}

// Every non-dropped, non-generated column of `table_sql` in attribute order, quoted, joined by ", ".
Result<std::string> copy_columns(PGconn* conn, const std::string& table_sql, const std::string& context) {
  auto res =
      run_sql(conn,
              "SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute "
              "WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped AND attgenerated = ''",
              context, {table_sql});
  if (!res) return res.status();
  if (PQgetisnull(res->get(), 0, 0))
    return Status::server("42P10", context + ": table has no columns to copy");
  return catalog::text_value(res->get(), 0, 0);
}

// What a table copy's errors say about each side: "copy of <table> from|to <shard>".
struct CopySides {
  std::string from;
  std::string to;
};

// Clears the moved buckets' rows on the target (inside a transaction that the copy commits) and
// starts COPY ... FROM STDIN there and COPY (SELECT ...) TO STDOUT on the source.
Status start_table_copy(PGconn* source, PGconn* target, const config::ShardedTable& table,
                        const CopyOptions& options, const BucketSet& buckets, const CopySides& sides) {
  auto filter = bucket_filter(table, buckets);
  if (!filter) return filter.status();
  auto source_table = resolve_table(source, table.name);
  if (!source_table)
    return Status::server(source_table.status().sqlstate, sides.from + ": " + source_table.status().message);
  auto columns = copy_columns(source, *source_table, sides.from);
  if (!columns) return columns.status();
  auto target_table = resolve_table(target, table.name);
  if (!target_table)
    return Status::server(target_table.status().sqlstate, sides.to + ": " + target_table.status().message);

  auto cleared = run_sql(target,
                         "BEGIN; SET LOCAL session_replication_role = replica; DELETE FROM " + *target_table +
                             " WHERE " + *filter,
                         sides.to);
  if (!cleared) {
    abandon_target(target, false);
    return cleared.status();
  }
  PgResultPtr copy_in(PQexec(
      target,
      ("COPY " + *target_table + " (" + *columns + ") FROM STDIN" + format_clause(options.format)).c_str()));
  if (PQresultStatus(copy_in.get()) != PGRES_COPY_IN) {
    Status status = catalog::error_status(target, copy_in.get(), sides.to);
    abandon_target(target, false);
    return status;
  }
  PgResultPtr copy_out(PQexec(source, ("COPY (SELECT " + *columns + " FROM " + *source_table + " WHERE " +
                                       *filter + ") TO STDOUT" + format_clause(options.format))
                                          .c_str()));
  if (PQresultStatus(copy_out.get()) != PGRES_COPY_OUT) {
    Status status = catalog::error_status(source, copy_out.get(), sides.from);
    abandon_target(target, true);
    return status;
  }
  return Status::ok();
}

// Relays the COPY data from source to target until the source's COPY ends, at the pacer's rate.
// Source data is read without blocking so a cancel is seen even while the source scans. On an
// error or a cancel both statements are stopped.
Status relay_copy_data(PGconn* source, PGconn* target, const CopyOptions& options, CopyPacer& pacer,
                       const CopySides& sides) {
  BinaryTupleCounter binary_rows;
  auto rows_in = [&](const char* data, int size) -> uint64_t {
    if (options.format == CopyFormat::Binary) return binary_rows.feed(data, static_cast<size_t>(size));
    return static_cast<uint64_t>(std::count(data, data + size, '\n'));  // a text row ends in one raw newline
  };
  auto stop_both = [&](Status status) {
    cancel_running_statement(source);
    abandon_target(target, true);
    return status;
  };
  for (;;) {
    if (pacer.canceled()) return stop_both(Status::client(kCanceled, sides.from + ": canceled"));
    char* buffer = nullptr;
    const int n = PQgetCopyData(source, &buffer, /*async=*/1);
    if (n > 0) {
      const int put = PQputCopyData(target, buffer, n);
      const uint64_t complete = rows_in(buffer, n);
      PQfreemem(buffer);
      if (put != 1) return stop_both(catalog::error_status(target, nullptr, sides.to));
      if (!pacer.account(complete, static_cast<uint64_t>(n)))
        return stop_both(Status::client(kCanceled, sides.from + ": canceled"));
    } else if (n == 0) {
      pollfd pfd{PQsocket(source), POLLIN, 0};
      poll(&pfd, 1, static_cast<int>(kCancelPoll.count()));
      if (!PQconsumeInput(source)) return stop_both(catalog::error_status(source, nullptr, sides.from));
    } else if (n == -1) {
      return Status::ok();
    } else {
      return stop_both(catalog::error_status(source, nullptr, sides.from));
    }
  }
}

// The statement's final result (an error the source hit mid-COPY arrives here), rest drained.
PgResultPtr final_result(PGconn* conn) {
  PgResultPtr res(PQgetResult(conn));
  while (PGresult* extra = PQgetResult(conn)) PQclear(extra);
  return res;
}

// Both COPY statements' outcomes, then the target's COMMIT.
Status finish_table_copy(PGconn* source, PGconn* target, const CopySides& sides) {
  PgResultPtr out_done = final_result(source);
  if (PQresultStatus(out_done.get()) != PGRES_COMMAND_OK) {
    Status status = catalog::error_status(source, out_done.get(), sides.from);
    abandon_target(target, true);
    return status;
  }
  PgResultPtr in_done(PQputCopyEnd(target, nullptr) == 1 ? final_result(target) : nullptr);
  if (PQresultStatus(in_done.get()) != PGRES_COMMAND_OK) {
    Status status = catalog::error_status(target, in_done.get(), sides.to);
    abandon_target(target, false);
    return status;
  }
  auto committed = run_sql(target, "COMMIT", sides.to);
  return committed ? Status::ok() : committed.status();
}

// Streams one table's rows of `buckets`. The source is inside its snapshot transaction; the
// target is idle.
Status copy_table(PGconn* source, PGconn* target, const config::ShardedTable& table,
                  const CopyOptions& options, const BucketSet& buckets, CopyPacer& pacer) {
  const CopySides sides{"copy of " + table.name + " from " + options.source_name,
                        "copy of " + table.name + " to " + options.target_name};
  if (Status started = start_table_copy(source, target, table, options, buckets, sides); !started)
    return started;
  if (Status relayed = relay_copy_data(source, target, options, pacer, sides); !relayed) return relayed;
  return finish_table_copy(source, target, sides);
}

// One stream of a copy: its own connections, the snapshot imported, every table's rows of
// `buckets` (docs/architecture.md §8.3).
Status copy_stream(const CopyOptions& options, const BucketSet& buckets, CopyPacer& pacer) {
  const catalog::ConnectOptions connect_options{kMoverApplicationName};
  auto source = catalog::connect(options.source_dsn, "copy from " + options.source_name, connect_options);
  if (!source) return source.status();
  auto target = catalog::connect(options.target_dsn, "copy to " + options.target_name, connect_options);
  if (!target) return target.status();
  std::string begin = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
  if (!options.snapshot_name.empty())
    begin += "; SET TRANSACTION SNAPSHOT " + sqltext::quote_literal(options.snapshot_name);
  auto snapshot =
      run_sql(source->get(), begin, "copy from " + options.source_name + ": importing the snapshot");
  if (!snapshot) return snapshot.status();
  for (const config::ShardedTable& table : options.tables) {
    if (Status status = copy_table(source->get(), target->get(), table, options, buckets, pacer); !status)
      return status;
  }
  return Status::ok();
}

}  // namespace

Result<catalog::PgResultPtr> run_sql(PGconn* conn, const std::string& sql, const std::string& context,
                                     const std::vector<std::optional<std::string>>& params) {
  PgResultPtr res;
  if (params.empty()) {
    res.reset(PQexec(conn, sql.c_str()));
  } else {
    std::vector<const char*> values;
    values.reserve(params.size());
    for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
    res.reset(PQexecParams(conn, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(),
                           nullptr, nullptr, 0));
  }
  const ExecStatusType st = PQresultStatus(res.get());
  if (!res || (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK))
    return catalog::error_status(conn, res.get(), context);
  return res;
}

Result<std::string> bucket_filter(const config::ShardedTable& table, const BucketSet& buckets) {
  auto expression = bucket_expression(table, buckets.bucket_count());
  if (!expression) return expression.status();
  return *expression + " = ANY('" + buckets.array_literal() + "'::int[])";
}

Result<std::string> resolve_table(PGconn* conn, const std::string& name) {
  auto res = run_sql(conn, "SELECT $1::regclass::text", "table " + name, {name});
  if (!res) return res.status();
  return catalog::text_value(res->get(), 0, 0);
}

std::vector<BucketSet> split_for_streams(const BucketSet& buckets, int streams) {
  const size_t parts =
      std::max<size_t>(1, std::min<size_t>(static_cast<size_t>(std::max(streams, 1)), buckets.list().size()));
  std::vector<std::vector<uint32_t>> lists(parts);
  for (size_t i = 0; i < buckets.list().size(); ++i) lists[i % parts].push_back(buckets.list()[i]);
  std::vector<BucketSet> out;
  out.reserve(parts);
  for (const auto& list : lists) out.emplace_back(buckets.bucket_count(), list);
  return out;
}

Result<CopyProgress> copy_buckets(const CopyOptions& options) {
  const std::vector<BucketSet> parts = split_for_streams(options.buckets, options.streams);
  CopyPacer pacer(options);
  const auto started = Clock::now();
  std::vector<Status> results(parts.size(), Status::ok());
  auto run = [&](size_t i) {
    results[i] = copy_stream(options, parts[i], pacer);
    if (!results[i]) pacer.fail();
  };
  std::vector<std::thread> helpers;
  for (size_t i = 1; i < parts.size(); ++i) helpers.emplace_back(run, i);
  run(0);
  for (auto& helper : helpers) helper.join();
  // The failure that stopped the others, not their "canceled" (unless a cancel stopped them all).
  auto failed = std::find_if(results.begin(), results.end(),
                             [](const Status& s) { return !s && s.sqlstate != kCanceled; });
  if (failed == results.end())
    failed = std::find_if(results.begin(), results.end(), [](const Status& s) { return !s; });
  if (failed != results.end()) return *failed;
  pacer.report();
  const CopyProgress copied = pacer.progress();
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  LOG_INFO("mover: copied %llu rows (%llu bytes) of %zu buckets from %s to %s in %.1f s (%zu stream(s))",
           static_cast<unsigned long long>(copied.rows), static_cast<unsigned long long>(copied.bytes),
           options.buckets.list().size(), options.source_name.c_str(), options.target_name.c_str(), seconds,
           parts.size());
  return copied;
}

Result<uint64_t> count_rows(PGconn* conn, const std::vector<config::ShardedTable>& tables,
                            const BucketSet& buckets) {
  uint64_t total = 0;
  for (const config::ShardedTable& table : tables) {
    auto filter = bucket_filter(table, buckets);
    if (!filter) return filter.status();
    auto name = resolve_table(conn, table.name);
    if (!name) return name.status();
    auto res = run_sql(conn, "SELECT count(*) FROM " + *name + " WHERE " + *filter,
                       "counting rows of " + table.name);
    if (!res) return res.status();
    int64_t rows = 0;
    catalog::parse_int64(res->get(), 0, 0, &rows);
    total += static_cast<uint64_t>(rows);
  }
  return total;
}

namespace {

// Moves `sequence` ($1) of `column` forward to the largest value the moved buckets hold within the
// sequence's own bounds, unless it is already past it (the next value is then max + 1). Values
// outside the bounds came from another shard's id range (docs/architecture.md "Globally unique
// ids"): following them would push this shard's sequence into that range, or past its MAXVALUE.
std::string advance_sequence_sql(const std::string& table, const std::string& column,
                                 const std::string& sequence, const std::string& bucket_expression,
                                 const BucketSet& buckets) {
  return "SELECT setval($1::regclass, x.m) FROM pg_catalog.pg_sequence q, LATERAL (SELECT max(" + column +
         ")::bigint AS m FROM " + table + " WHERE " + bucket_expression + " = ANY('" +
         buckets.array_literal() + "'::int[]) AND " + column + " BETWEEN q.seqmin AND q.seqmax) x, " +
         sequence +
         " s WHERE q.seqrelid = $1::regclass AND x.m IS NOT NULL "
         "AND (x.m > s.last_value OR (x.m = s.last_value AND NOT s.is_called))";
}

}  // namespace

Status advance_sequences(PGconn* target, const std::vector<config::ShardedTable>& tables,
                         const BucketSet& buckets) {
  if (buckets.empty()) return Status::ok();
  for (const config::ShardedTable& table : tables) {
    const std::string context = "advancing sequences of " + table.name;
    auto name = resolve_table(target, table.name);
    if (!name) return name.status();
    auto expression = bucket_expression(table, buckets.bucket_count());
    if (!expression) return expression.status();
    // Serial and identity columns alike: pg_get_serial_sequence finds both.
    auto owned = run_sql(target,
                         "SELECT quote_ident(attname), pg_get_serial_sequence($1, attname) FROM pg_attribute "
                         "WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped "
                         "AND pg_get_serial_sequence($1, attname) IS NOT NULL ORDER BY attnum",
                         context, {*name});
    if (!owned) return owned.status();
    for (int row = 0; row < PQntuples(owned->get()); ++row) {
      const std::string column = catalog::text_value(owned->get(), row, 0);
      const std::string sequence = catalog::text_value(owned->get(), row, 1);  // quoted by the server
      // Only forward: next value = max + 1 unless the sequence is already past it.
      auto moved = run_sql(target, advance_sequence_sql(*name, column, sequence, *expression, buckets),
                           context, {sequence});
      if (!moved) return moved.status();
    }
  }
  return Status::ok();
}

}  // namespace sw::mover
