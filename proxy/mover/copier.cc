#include "mover/copier.h"

#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "common/log.h"
#include "wire/byte_reader.h"

namespace sw::mover {
namespace {

using Clock = std::chrono::steady_clock;
using catalog::PgConnPtr;
using catalog::PgResultPtr;

constexpr auto kProgressInterval = std::chrono::milliseconds(500);
constexpr auto kCancelPoll = std::chrono::milliseconds(100);

// Counts complete tuples in a binary COPY stream fed in arbitrary pieces: the 19-byte header
// (signature, flags, extension length) and its extension, then per tuple an int16 field count
// (-1 ends the stream) and per field an int32 length (-1 = NULL) plus that many bytes.
class BinaryTupleCounter {
 public:
  uint64_t feed(const char* data, size_t size) {
    uint64_t tuples = 0;
    size_t at = 0;
    while (at < size && expect_ != Expect::End) {
      if (expect_ == Expect::HeaderExtension || expect_ == Expect::FieldData) {
        const size_t take = static_cast<size_t>(std::min<uint64_t>(skip_, size - at));
        at += take;
        skip_ -= take;
        if (skip_ == 0) {
          if (expect_ == Expect::HeaderExtension)
            expect_ = Expect::FieldCount;
          else
            field_done(&tuples);
        }
        continue;
      }
      const size_t need = expect_ == Expect::Header ? 19 : expect_ == Expect::FieldCount ? 2 : 4;
      const size_t take = std::min(need - partial_.size(), size - at);
      partial_.append(data + at, take);
      at += take;
      if (partial_.size() == need) {
        fixed_item_done(&tuples);
        partial_.clear();
      }
    }
    return tuples;
  }

 private:
  enum class Expect { Header, HeaderExtension, FieldCount, FieldLength, FieldData, End };

  // partial_ holds exactly the item's bytes: the reads below cannot fail.
  void fixed_item_done(uint64_t* tuples) {
    wire::ByteReader item(partial_);
    if (expect_ == Expect::Header) {
      uint32_t extension = 0;
      item.skip(15);  // signature and flags
      item.u32(extension);
      skip_ = extension;
      expect_ = skip_ ? Expect::HeaderExtension : Expect::FieldCount;
    } else if (expect_ == Expect::FieldCount) {
      int16_t count = 0;
      item.i16(count);
      if (count < 0) {
        expect_ = Expect::End;
      } else if (count == 0) {
        ++*tuples;
      } else {
        fields_left_ = count;
        expect_ = Expect::FieldLength;
      }
    } else {  // FieldLength
      int32_t length = 0;
      item.i32(length);
      if (length > 0) {
        skip_ = static_cast<uint64_t>(length);
        expect_ = Expect::FieldData;
      } else {
        field_done(tuples);
      }
    }
  }

  void field_done(uint64_t* tuples) {
    if (--fields_left_ > 0) {
      expect_ = Expect::FieldLength;
    } else {
      ++*tuples;
      expect_ = Expect::FieldCount;
    }
  }

  Expect expect_ = Expect::Header;
  std::string partial_;  // a fixed-size item split across pieces
  uint64_t skip_ = 0;    // bytes of header extension or field data still to pass over
  int fields_left_ = 0;
};

// Shared by every table of one copy_buckets call: totals, the rate limit, progress reports.
class CopyPacer {
 public:
  explicit CopyPacer(const CopyOptions& options)
      : options_(options), start_(Clock::now()), last_report_(start_) {}

  bool canceled() const { return options_.cancel && options_.cancel->load(std::memory_order_relaxed); }

  // Accounts one piece of COPY data, reports progress when due and sleeps while the copy is ahead
  // of rows_per_sec. False when canceled.
  bool account(uint64_t rows, uint64_t bytes) {
    progress_.rows += rows;
    progress_.bytes += bytes;
    if (options_.on_progress && Clock::now() - last_report_ >= kProgressInterval) report();
    if (options_.rows_per_sec <= 0) return true;
    const auto due =
        start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                     static_cast<double>(progress_.rows) / static_cast<double>(options_.rows_per_sec)));
    // Sleep in slices so a cancel is seen; skip tiny sleeps (they cost more than they pace).
    for (auto now = Clock::now(); due - now > std::chrono::milliseconds(5); now = Clock::now()) {
      if (canceled()) return false;
      std::this_thread::sleep_for(std::min<Clock::duration>(due - now, kCancelPoll));
      if (options_.on_progress && Clock::now() - last_report_ >= kProgressInterval) report();
    }
    return true;
  }

  void report() {
    last_report_ = Clock::now();
    if (options_.on_progress) options_.on_progress(progress_);
  }

  const CopyProgress& progress() const { return progress_; }

 private:
  const CopyOptions& options_;
  Clock::time_point start_, last_report_;
  CopyProgress progress_;
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
                        const CopyOptions& options, const CopySides& sides) {
  auto filter = bucket_filter(table, options.buckets);
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
    if (pacer.canceled()) return stop_both(Status::client("57014", sides.from + ": canceled"));
    char* buffer = nullptr;
    const int n = PQgetCopyData(source, &buffer, /*async=*/1);
    if (n > 0) {
      const int put = PQputCopyData(target, buffer, n);
      const uint64_t complete = rows_in(buffer, n);
      PQfreemem(buffer);
      if (put != 1) return stop_both(catalog::error_status(target, nullptr, sides.to));
      if (!pacer.account(complete, static_cast<uint64_t>(n)))
        return stop_both(Status::client("57014", sides.from + ": canceled"));
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

// Streams one table. The source is inside its snapshot transaction; the target is idle.
Status copy_table(PGconn* source, PGconn* target, const config::ShardedTable& table,
                  const CopyOptions& options, CopyPacer& pacer) {
  const CopySides sides{"copy of " + table.name + " from " + options.source_name,
                        "copy of " + table.name + " to " + options.target_name};
  if (Status started = start_table_copy(source, target, table, options, sides); !started) return started;
  if (Status relayed = relay_copy_data(source, target, options, pacer, sides); !relayed) return relayed;
  return finish_table_copy(source, target, sides);
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

Result<CopyProgress> copy_buckets(const CopyOptions& options) {
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

  CopyPacer pacer(options);
  const auto started = Clock::now();
  for (const config::ShardedTable& table : options.tables) {
    Status status = copy_table(source->get(), target->get(), table, options, pacer);
    if (!status) return status;
  }
  pacer.report();
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  LOG_INFO("mover: copied %llu rows (%llu bytes) of %zu buckets from %s to %s in %.1f s",
           static_cast<unsigned long long>(pacer.progress().rows),
           static_cast<unsigned long long>(pacer.progress().bytes), options.buckets.list().size(),
           options.source_name.c_str(), options.target_name.c_str(), seconds);
  return pacer.progress();
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
