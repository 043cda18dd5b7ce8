#include "mover/change_applier.h"

#include <optional>

#include "router/bucket_hash.h"
#include "sqltext/catalog_sql.h"

namespace sw::mover {
namespace pgo = wire::pgoutput;

namespace {

constexpr const char* kUpsertProgressSql =
    "INSERT INTO shardwire.mover_progress (migration_id, applied_lsn, updated_at) VALUES ($1, $2::pg_lsn, "
    "now()) "
    "ON CONFLICT (migration_id) DO UPDATE SET applied_lsn = EXCLUDED.applied_lsn, updated_at = "
    "EXCLUDED.updated_at";

// "INSERT INTO "public"."orders"": the statement's verb and table, for messages (no values: the
// SQL text never holds any).
std::string statement_summary(const std::string& sql) {
  size_t end = 0;
  for (int words = 0; words < 3 && end != std::string::npos; ++words) {
    end = sql.find(' ', end == 0 ? 0 : end + 1);
  }
  return end == std::string::npos ? sql : sql.substr(0, end);
}

// A failed statement's Status without anything that may quote a value: PostgreSQL's
// data-exception messages (class 22, e.g. invalid input syntax) can contain the offending value.
Status apply_error(const Status& error, const std::string& what) {
  Status out = error;
  if (error.sqlstate.rfind("22", 0) == 0) {
    out.message = what + ": data exception (SQLSTATE " + error.sqlstate + ")";
  } else {
    out.message = what + ": " + error.message;
  }
  return out;
}

Status prepare_error(PGconn* conn, const PGresult* res, const std::string& sql) {
  std::string what = "preparing ";
  what += statement_summary(sql);
  what += " on the target";
  return apply_error(catalog::error_status(conn, res, "query failed"), what);
}

}  // namespace

Result<Lsn> read_applied_lsn(PGconn* target, int64_t migration_id) {
  auto exists = catalog::query(target, "SELECT to_regclass('shardwire.mover_progress') IS NOT NULL");
  if (!exists) return apply_error(exists.status(), "reading mover progress");
  if (catalog::text_value(exists->get(), 0, 0) != "t") return Lsn{0};
  auto res =
      catalog::query(target, "SELECT applied_lsn::text FROM shardwire.mover_progress WHERE migration_id = $1",
                     {std::to_string(migration_id)});
  if (!res) return apply_error(res.status(), "reading mover progress");
  if (PQntuples(res->get()) == 0) return Lsn{0};
  return parse_lsn(catalog::text_value(res->get(), 0, 0));
}

Result<std::unique_ptr<ChangeApplier>> ChangeApplier::open(const std::string& target_dsn,
                                                           int64_t migration_id,
                                                           std::vector<config::ShardedTable> tables,
                                                           BucketSet buckets) {
  for (const auto& table : tables) {
    auto key_type = router::key_type_from_name(table.type);
    if (!key_type) return Status::config("sharded table " + table.name + ": " + key_type.status().message);
  }
  catalog::ConnectOptions options;
  options.application_name = kMoverApplicationName;
  auto conn = catalog::connect(target_dsn, "target shard", options);
  if (!conn) return conn.status();
  PGconn* c = conn->get();
  if (Status s = catalog::exec(c, "SET session_replication_role = replica; SET synchronous_commit = on"); !s)
    return apply_error(s, "preparing the applier session on the target");
  const std::string ddl =
      std::string("BEGIN; ") + sqltext::kInitLockSql + "; " + kMoverProgressSql + "; COMMIT";
  if (Status s = catalog::exec(c, ddl); !s)
    return apply_error(s, "creating shardwire.mover_progress on the target");
  auto applied = read_applied_lsn(c, migration_id);
  if (!applied) return applied.status();
  std::unique_ptr<ChangeApplier> applier(
      new ChangeApplier(std::move(*conn), migration_id, std::move(tables), std::move(buckets)));
  applier->applied_lsn_ = *applied;
  return applier;
}

Status ChangeApplier::apply_transaction(const std::vector<pgo::Message>& changes,
                                        const pgo::RelationCache& relations, Lsn end_lsn) {
  if (end_lsn <= applied_lsn_) return Status::ok();  // applied before a restart
  auto staged = stage_transaction(changes, relations);
  if (!staged) return staged.status();
  return commit_staged(end_lsn);
}

Result<bool> ChangeApplier::stage_transaction(const std::vector<pgo::Message>& changes,
                                              const pgo::RelationCache& relations) {
  std::vector<sqltext::ApplyStatement> statements;
  uint64_t kept = 0;
  std::optional<pgo::RelationCache> described_here;  // `relations` plus this transaction's Relation messages
  for (const auto& message : changes) {
    if (const auto* relation = std::get_if<pgo::Relation>(&message)) {
      if (!described_here) described_here = relations;
      described_here->put(*relation);
      continue;
    }
    auto translated =
        sqltext::change_statements(message, described_here ? *described_here : relations, tables_, buckets_);
    if (!translated) return translated.status();
    if (translated->empty()) continue;
    ++kept;
    for (auto& statement : *translated) statements.push_back(std::move(statement));
  }
  last_staged_buckets_.clear();
  if (statements.empty()) return false;
  for (const auto& statement : statements)
    last_staged_buckets_.insert(last_staged_buckets_.end(), statement.buckets.begin(),
                                statement.buckets.end());
  for (auto& statement : statements) staged_.push_back(std::move(statement));
  staged_changes_ += kept;
  return true;
}

Status ChangeApplier::commit_staged(Lsn end_lsn) {
  std::vector<sqltext::ApplyStatement> statements;
  statements.swap(staged_);
  const uint64_t kept = staged_changes_;
  staged_changes_ = 0;
  if (statements.empty() || end_lsn <= applied_lsn_) return Status::ok();
  if (Status s = run_in_transaction(statements, end_lsn); !s) return s;
  applied_lsn_ = end_lsn;
  applied_changes_ += kept;
  return Status::ok();
}

Status ChangeApplier::prepare_new(const std::vector<sqltext::ApplyStatement>& statements) {
  PGconn* c = conn_.get();
  for (const auto& statement : statements) {
    if (prepared_.size() >= kPreparedLimit) return Status::ok();
    if (prepared_.count(statement.sql) > 0) continue;
    const std::string name = "sw_apply_" + std::to_string(prepared_.size() + 1);
    catalog::PgResultPtr res(PQprepare(c, name.c_str(), statement.sql.c_str(), 0, nullptr));
    if (!res || PQresultStatus(res.get()) != PGRES_COMMAND_OK)
      return prepare_error(c, res.get(), statement.sql);
    prepared_.emplace(statement.sql, name);
  }
  return Status::ok();
}

Status ChangeApplier::run_in_transaction(const std::vector<sqltext::ApplyStatement>& statements,
                                         Lsn end_lsn) {
  if (statements.size() <= kPipelineLimit) return run_pipelined(statements, end_lsn);
  PGconn* c = conn_.get();
  const std::string what =
      "applying the source transaction ending at " + lsn_text(end_lsn) + " on the target";
  if (Status s = catalog::exec(c, "BEGIN"); !s) return apply_error(s, what);
  auto fail = [&](const Status& error, const std::string& detail) {
    if (!catalog::connection_lost(c)) (void)catalog::exec(c, "ROLLBACK");
    return apply_error(error, what + detail);
  };
  for (size_t i = 0; i < statements.size(); ++i) {
    auto res = catalog::query(c, statements[i].sql, statements[i].params);
    if (!res)
      return fail(res.status(),
                  ", statement " + std::to_string(i + 1) + " (" + statement_summary(statements[i].sql) + ")");
  }
  auto progress = catalog::query(c, kUpsertProgressSql, {std::to_string(migration_id_), lsn_text(end_lsn)});
  if (!progress) return fail(progress.status(), ", progress row");
  if (Status s = catalog::exec(c, "COMMIT"); !s) return fail(s, ", commit");
  return Status::ok();
}

// The same in one round trip: BEGIN, the statements, the progress row and COMMIT sent as a libpq
// pipeline, then every result read. The first error aborts the rest (the server skips to the
// Sync) and the transaction is rolled back.
Status ChangeApplier::run_pipelined(const std::vector<sqltext::ApplyStatement>& statements, Lsn end_lsn) {
  PGconn* c = conn_.get();
  const std::string what =
      "applying the source transaction ending at " + lsn_text(end_lsn) + " on the target";
  if (Status s = prepare_new(statements); !s) return s;
  std::vector<const char*> values;
  auto send = [&](const std::string& sql, const std::vector<std::optional<std::string>>& params) {
    values.clear();
    for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
    const int n = static_cast<int>(values.size());
    auto prepared = prepared_.find(sql);
    if (prepared != prepared_.end())
      return PQsendQueryPrepared(c, prepared->second.c_str(), n, values.data(), nullptr, nullptr, 0) == 1;
    return PQsendQueryParams(c, sql.c_str(), n, nullptr, values.data(), nullptr, nullptr, 0) == 1;
  };
  if (PQenterPipelineMode(c) != 1) return apply_error(catalog::error_status(c, nullptr, "pipeline"), what);
  bool sent = send("BEGIN", {});
  for (const auto& statement : statements) sent = sent && send(statement.sql, statement.params);
  sent = sent && send(kUpsertProgressSql, {std::to_string(migration_id_), lsn_text(end_lsn)});
  sent = sent && send("COMMIT", {});
  sent = sent && PQpipelineSync(c) == 1;
  Status first_error = sent ? Status::ok() : catalog::error_status(c, nullptr, "sending");
  std::string detail;
  // Results: one per query (each followed by a null), then the Sync's.
  size_t queries = statements.size() + 3;
  for (size_t i = 0; sent && i < queries; ++i) {
    catalog::PgResultPtr res(PQgetResult(c));
    if (!res) break;
    ExecStatusType status = PQresultStatus(res.get());
    if (first_error.is_ok() && status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK &&
        status != PGRES_PIPELINE_ABORTED) {
      first_error = catalog::error_status(c, res.get(), "query failed");
      detail = i == 0                   ? ", begin"
               : i <= statements.size() ? ", statement " + std::to_string(i) + " (" +
                                              statement_summary(statements[i - 1].sql) + ")"
               : i == statements.size() + 1 ? ", progress row"
                                            : ", commit";
    }
    while (PGresult* rest = PQgetResult(c)) PQclear(rest);  // the null after each query's result
  }
  if (sent) {
    catalog::PgResultPtr sync(PQgetResult(c));  // PGRES_PIPELINE_SYNC
  }
  PQexitPipelineMode(c);
  if (first_error.is_ok()) return Status::ok();
  if (!catalog::connection_lost(c)) (void)catalog::exec(c, "ROLLBACK");
  return apply_error(first_error, what + detail);
}

}  // namespace sw::mover
