#include "catalog/reference_tables.h"

#include "catalog/pq.h"
#include "sqltext/reference_sql.h"

namespace sw::catalog {
namespace {

// The resolved name of `configured_name` on the shard, "" when it does not exist there.
Result<std::string> resolve(PGconn* shard, const std::string& configured_name) {
  auto res = query(shard, sqltext::kResolveTableSql, {configured_name});
  if (!res) return res.status();
  if (PQgetisnull(res->get(), 0, 0)) return std::string();
  return text_value(res->get(), 0, 0);
}

Result<std::string> column_list(PGconn* shard, const char* sql, const std::string& table) {
  auto res = query(shard, sql, {table});
  if (!res) return res.status();
  if (PQgetisnull(res->get(), 0, 0)) return Status::server("42P10", "table " + table + " has no columns");
  return text_value(res->get(), 0, 0);
}

Status with_what(const Status& status, const std::string& what) {
  return {status.fault, status.sqlstate, what + ": " + status.message};
}

// COPY `table`'s writable columns from `from` into the staging table on `to` (already in COPY IN).
Status stream_rows(PGconn* from, PGconn* to, const std::string& from_table, const std::string& columns) {
  PgResultPtr out(PQexec(from, sqltext::reference_copy_out_sql(from_table, columns).c_str()));
  if (PQresultStatus(out.get()) != PGRES_COPY_OUT) return error_status(from, out.get(), "COPY TO");
  char* row = nullptr;
  int length = 0;
  while ((length = PQgetCopyData(from, &row, 0)) > 0) {
    const int put = PQputCopyData(to, row, length);
    PQfreemem(row);
    if (put != 1) return error_status(to, nullptr, "COPY FROM");
  }
  PgResultPtr done_out(PQgetResult(from));
  if (length != -1 || PQresultStatus(done_out.get()) != PGRES_COMMAND_OK)
    return error_status(from, done_out.get(), "COPY TO");
  while (PGresult* extra = PQgetResult(from)) PQclear(extra);
  if (PQputCopyEnd(to, nullptr) != 1) return error_status(to, nullptr, "COPY FROM");
  PgResultPtr done_in(PQgetResult(to));
  if (PQresultStatus(done_in.get()) != PGRES_COMMAND_OK) return error_status(to, done_in.get(), "COPY FROM");
  while (PGresult* extra = PQgetResult(to)) PQclear(extra);
  return Status::ok();
}

// Stages `from`'s rows on `to` and inserts those it lacks, in one transaction on `to`.
Status copy_missing_rows(PGconn* from, PGconn* to, const std::string& from_table,
                         const std::string& to_table) {
  auto columns = column_list(from, sqltext::kWritableColumnsSql, from_table);
  if (!columns) return columns.status();
  if (Status s = exec(to, "BEGIN; " + sqltext::reference_staging_sql(to_table)); !s) return s;
  PgResultPtr copy_in(PQexec(to, sqltext::reference_copy_in_sql(*columns).c_str()));
  Status status = PQresultStatus(copy_in.get()) == PGRES_COPY_IN
                      ? stream_rows(from, to, from_table, *columns)
                      : error_status(to, copy_in.get(), "COPY FROM");
  if (status) status = exec(to, sqltext::reference_fill_sql(to_table, *columns));
  if (!status) {
    static_cast<void>(exec(to, "ROLLBACK"));  // the error to report is `status`
    return status;
  }
  return exec(to, "COMMIT");
}

}  // namespace

Result<ReferenceDigest> digest_reference_table(PGconn* shard, const std::string& configured_name) {
  ReferenceDigest digest;
  auto table = resolve(shard, configured_name);
  if (!table) return table.status();
  if (table->empty()) return digest;
  digest.exists = true;
  auto columns = column_list(shard, sqltext::kColumnsByNameSql, *table);
  if (!columns) return columns.status();
  auto res = query(shard, sqltext::reference_digest_sql(configured_name, *table, *columns));
  if (!res) return res.status();
  int64_t rows = 0;
  if (!parse_int64(res->get(), 0, 0, &rows))
    return Status::server("XX000", "malformed count of reference table " + configured_name);
  digest.rows = static_cast<uint64_t>(rows);
  digest.checksum = text_value(res->get(), 0, 1);
  return digest;
}

std::string describe_digest(const ReferenceDigest& digest) {
  if (!digest.exists) return "missing";
  return std::to_string(digest.rows) + " rows, checksum " + digest.checksum;
}

Status check_reference_copies(PGconn* reference, const std::string& reference_name, PGconn* shard,
                              const std::string& shard_name, const std::vector<std::string>& tables) {
  auto table_on = [](const std::string& where, const std::string& table) {
    return "shard " + where + ": reference table " + table;
  };
  auto difference = [&](const std::string& table, const ReferenceDigest& actual,
                        const ReferenceDigest& expected) {
    return table + " on " + shard_name + ": " + describe_digest(actual) + ", on " + reference_name + ": " +
           describe_digest(expected);
  };
  std::string differences;
  for (const std::string& table : tables) {
    auto expected = digest_reference_table(reference, table);
    if (!expected) return with_what(expected.status(), table_on(reference_name, table));
    auto actual = digest_reference_table(shard, table);
    if (!actual) return with_what(actual.status(), table_on(shard_name, table));
    if (*expected == *actual) continue;
    if (!differences.empty()) differences += "; ";
    differences += difference(table, *actual, *expected);
  }
  if (differences.empty()) return Status::ok();
  return Status::server("55000", "the copy of reference tables on shard " + shard_name +
                                     " differs from shard " + reference_name + "'s (" + differences +
                                     "); run shardwire init to fill it, VERIFY REFERENCE <table> to compare");
}

Result<std::string> fill_reference_copy(PGconn* from, const std::string& from_name, PGconn* to,
                                        const std::string& to_name, const std::string& table) {
  const std::string what = "reference table " + table + " on shard " + to_name;
  auto from_table = resolve(from, table);
  if (!from_table)
    return with_what(from_table.status(), "reference table " + table + " on shard " + from_name);
  if (from_table->empty()) return "not on " + from_name + " (the default shard): nothing to copy";
  auto to_table = resolve(to, table);
  if (!to_table) return with_what(to_table.status(), what);
  if (to_table->empty())
    return "missing on " + to_name +
           ": create it through shardwire (CREATE TABLE IF NOT EXISTS runs on every shard), then run init "
           "again";
  auto expected = digest_reference_table(from, table);
  if (!expected) return with_what(expected.status(), "reference table " + table + " on shard " + from_name);
  auto before = digest_reference_table(to, table);
  if (!before) return with_what(before.status(), what);
  if (*before == *expected) return "same as " + from_name + " (" + std::to_string(expected->rows) + " rows)";
  if (Status s = copy_missing_rows(from, to, *from_table, *to_table); !s)
    return with_what(s, what + ": copying rows from " + from_name);
  auto after = digest_reference_table(to, table);
  if (!after) return with_what(after.status(), what);
  if (*after != *expected)
    return Status::server("55000", what + " differs from " + from_name +
                                       "'s after copying the rows it lacked (" + describe_digest(*after) +
                                       " there, " + describe_digest(*expected) + " on " + from_name +
                                       "): it holds rows the default shard does not; fix them by hand (or "
                                       "TRUNCATE it on " +
                                       to_name + ") and run init again");
  return std::to_string(after->rows - before->rows) + " rows copied from " + from_name;
}

}  // namespace sw::catalog
