#include "catalog/migrations.h"

#include <cstdlib>

namespace sw::catalog {

using catalog_rows::parse_migration_state;
using catalog_rows::parse_migration_step;

namespace {

constexpr const char* kColumns =
    "id, state, step, source, target, buckets::text, slot, publication, consistent_lsn::text, rows_copied, "
    "rows_total, bytes_copied, lag_bytes, lag_seconds, paused, cancel_requested, rollback_requested, "
    "expire_requested, rolling_back, cutover_attempts, last_pause_ms, (retry_at IS NULL OR retry_at <= "
    "now()), "
    "rollback_expires_at::text, greatest(extract(epoch FROM rollback_expires_at - now()), 0)::float8, "
    "reverse_slot, reverse_publication, reverse_lsn::text, coalesce(error, ''), created_at::text, "
    "coalesce(extract(epoch FROM copy_progress_at - copy_started_at), 0)::float8";

std::vector<uint32_t> parse_int_array(const std::string& text) {
  std::vector<uint32_t> out;
  const char* p = text.c_str();
  while (*p) {
    if (*p >= '0' && *p <= '9') {
      char* end = nullptr;
      out.push_back(static_cast<uint32_t>(std::strtoul(p, &end, 10)));
      p = end;
    } else {
      ++p;
    }
  }
  return out;
}

std::string array_literal(const std::vector<uint32_t>& buckets) {
  std::string out = "{";
  for (size_t i = 0; i < buckets.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(buckets[i]);
  }
  return out + "}";
}

std::optional<std::string> nullable(const PGresult* res, int row, int col) {
  if (PQgetisnull(res, row, col)) return std::nullopt;
  return text_value(res, row, col);
}

Migration read_row(const PGresult* res, int row) {
  Migration m;
  int64_t n = 0;
  auto int_at = [&](int col) { return parse_int64(res, row, col, &n) ? n : 0; };
  auto bool_at = [&](int col) { return text_value(res, row, col) == "t"; };
  m.id = int_at(0);
  auto state = parse_migration_state(text_value(res, row, 1));
  m.state = state ? *state : MigrationState::Failed;
  auto step = parse_migration_step(text_value(res, row, 2));
  m.step = step ? *step : MigrationStep::None;
  m.source = text_value(res, row, 3);
  m.target = text_value(res, row, 4);
  m.buckets = parse_int_array(text_value(res, row, 5));
  m.slot = text_value(res, row, 6);
  m.publication = text_value(res, row, 7);
  m.consistent_lsn = nullable(res, row, 8);
  m.rows_copied = int_at(9);
  m.rows_total = int_at(10);
  m.bytes_copied = int_at(11);
  m.lag_bytes = int_at(12);
  m.lag_seconds = std::atof(text_value(res, row, 13).c_str());
  m.paused = bool_at(14);
  m.cancel_requested = bool_at(15);
  m.rollback_requested = bool_at(16);
  m.expire_requested = bool_at(17);
  m.rolling_back = bool_at(18);
  m.cutover_attempts = static_cast<int>(int_at(19));
  if (auto pause = nullable(res, row, 20)) m.last_pause_ms = std::atof(pause->c_str());
  m.retry_due = bool_at(21);
  m.rollback_expires_at = nullable(res, row, 22);
  m.rollback_seconds_left = std::atof(text_value(res, row, 23).c_str());
  m.reverse_slot = text_value(res, row, 24);
  m.reverse_publication = text_value(res, row, 25);
  m.reverse_lsn = nullable(res, row, 26);
  m.error = text_value(res, row, 27);
  m.created_at = text_value(res, row, 28);
  m.copy_seconds = std::atof(text_value(res, row, 29).c_str());
  return m;
}

// One UPDATE of migration `id`: "<assignments>" with $2.. parameters ($1 is the id).
Status update_row(PGconn* conn, int64_t id, const std::string& assignments,
                  const std::vector<std::optional<std::string>>& params = {}) {
  std::vector<std::optional<std::string>> all{std::to_string(id)};
  all.insert(all.end(), params.begin(), params.end());
  auto res = query(
      conn, "UPDATE shardwire.migrations SET " + assignments + ", updated_at = now() WHERE id = $1", all);
  return res ? Status::ok() : res.status();
}

// The same, only while `condition` holds for the row; false when it did not (nothing changed).
Result<bool> update_row_if(PGconn* conn, int64_t id, const std::string& assignments,
                           const std::string& condition,
                           const std::vector<std::optional<std::string>>& params = {}) {
  std::vector<std::optional<std::string>> all{std::to_string(id)};
  all.insert(all.end(), params.begin(), params.end());
  auto res = query(conn,
                   "UPDATE shardwire.migrations SET " + assignments +
                       ", updated_at = now() WHERE id = $1 AND (" + condition + ") RETURNING id",
                   all);
  if (!res) return res.status();
  return PQntuples(res->get()) == 1;
}

}  // namespace

Result<int64_t> create_migration(PGconn* conn, const std::string& source, const std::string& target,
                                 const std::vector<uint32_t>& buckets) {
  if (buckets.empty()) return Status::client("22023", "no buckets to move");
  if (source == target) return Status::client("22023", "the buckets are already on shard " + target);
  if (Status s = exec(conn, "BEGIN; LOCK TABLE shardwire.migrations IN SHARE ROW EXCLUSIVE MODE"); !s)
    return s;
  auto abort_with = [&](Status status) -> Result<int64_t> {
    static_cast<void>(exec(conn, "ROLLBACK"));  // the error to report is `status`
    return status;
  };
  std::string set = array_literal(buckets);
  auto wrong = query(conn,
                     "SELECT b.bucket, coalesce(c.shard, '(none)'), coalesce(c.state, '') "
                     "FROM unnest($1::int[]) AS b(bucket) LEFT JOIN shardwire.buckets c USING (bucket) "
                     "WHERE c.shard IS DISTINCT FROM $2 OR c.state <> 'ACTIVE' ORDER BY 1 LIMIT 1",
                     {set, source});
  if (!wrong) return abort_with(wrong.status());
  if (PQntuples(wrong->get()) > 0) {
    std::string bucket = text_value(wrong->get(), 0, 0);
    std::string owner = text_value(wrong->get(), 0, 1);
    std::string state = text_value(wrong->get(), 0, 2);
    return abort_with(Status::client(
        "22023", "bucket " + bucket + " is " +
                     (owner == "(none)" ? "not in the directory" : "on shard " + owner + " (" + state + ")") +
                     ", not ACTIVE on " + source));
  }
  auto busy =
      query(conn,
            "SELECT m.id, b FROM shardwire.migrations m, unnest(m.buckets) b "
            "WHERE m.state NOT IN ('done', 'failed', 'cancelled', 'rolled_back') AND b = ANY($1::int[]) "
            "ORDER BY 1, 2 LIMIT 1",
            {set});
  if (!busy) return abort_with(busy.status());
  if (PQntuples(busy->get()) > 0)
    return abort_with(Status::client("55006", "bucket " + text_value(busy->get(), 0, 1) +
                                                  " is already moving in migration " +
                                                  text_value(busy->get(), 0, 0)));
  auto inserted = query(conn,
                        "INSERT INTO shardwire.migrations (state, source, target, buckets) "
                        "VALUES ('planned', $1, $2, $3::int[]) RETURNING id",
                        {source, target, set});
  if (!inserted) return abort_with(inserted.status());
  int64_t id = 0;
  parse_int64(inserted->get(), 0, 0, &id);
  if (Status s = exec(conn, "COMMIT"); !s) return s;
  return id;
}

Result<Migration> get_migration(PGconn* conn, int64_t id) {
  auto res = query(conn, std::string("SELECT ") + kColumns + " FROM shardwire.migrations WHERE id = $1",
                   {std::to_string(id)});
  if (!res) return res.status();
  if (PQntuples(res->get()) == 0) return Status::client("42704", "no migration " + std::to_string(id));
  return read_row(res->get(), 0);
}

Result<std::vector<Migration>> list_migrations(PGconn* conn, bool active_only) {
  std::string sql = std::string("SELECT ") + kColumns + " FROM shardwire.migrations";
  if (active_only) sql += " WHERE state NOT IN ('done', 'failed', 'cancelled', 'rolled_back')";
  auto res = query(conn, sql + " ORDER BY id");
  if (!res) return res.status();
  std::vector<Migration> out;
  out.reserve(static_cast<size_t>(PQntuples(res->get())));
  for (int row = 0; row < PQntuples(res->get()); ++row) out.push_back(read_row(res->get(), row));
  return out;
}

Status mark_state(PGconn* conn, int64_t id, MigrationState state, MigrationStep step) {
  return update_row(conn, id, "state = $2, step = $3, error = NULL",
                    {migration_state_name(state), migration_step_name(step)});
}

Status record_step(PGconn* conn, int64_t id, MigrationStep step) {
  return update_row(conn, id, "step = $2", {migration_step_name(step)});
}

Status record_error(PGconn* conn, int64_t id, const std::string& error) {
  return update_row(conn, id, "error = nullif($2, '')", {error});
}

Status clear_error(PGconn* conn, int64_t id) { return update_row(conn, id, "error = NULL"); }

Status record_copy_start(PGconn* conn, int64_t id, const CopyStart& start) {
  return update_row(
      conn, id,
      "slot = $2, publication = $3, consistent_lsn = $4::pg_lsn, rows_total = $5, "
      "rows_copied = 0, bytes_copied = 0, step = 'copy', error = NULL, copy_started_at = now(), "
      "copy_progress_at = now()",
      {start.slot, start.publication, start.consistent_lsn, std::to_string(start.rows_total)});
}

Result<bool> record_copy_progress(PGconn* conn, int64_t id, int64_t rows, int64_t bytes) {
  auto res =
      query(conn,
            "UPDATE shardwire.migrations SET rows_copied = $2, bytes_copied = $3, copy_progress_at = now(), "
            "updated_at = now() "
            "WHERE id = $1 RETURNING paused OR cancel_requested",
            {std::to_string(id), std::to_string(rows), std::to_string(bytes)});
  if (!res) return res.status();
  return PQntuples(res->get()) == 1 && text_value(res->get(), 0, 0) == "t";
}

Status record_rows_total(PGconn* conn, int64_t id, int64_t rows) {
  return update_row(conn, id, "rows_total = $2", {std::to_string(rows)});
}

Status record_reverse_slot(PGconn* conn, int64_t id, const std::string& name) {
  return update_row(conn, id, "reverse_slot = $2, reverse_publication = $2", {name});
}

Status record_lag(PGconn* conn, int64_t id, uint64_t lag_bytes, double lag_seconds) {
  return update_row(conn, id, "lag_bytes = $2, lag_seconds = $3",
                    {std::to_string(lag_bytes), std::to_string(lag_seconds)});
}

Result<bool> begin_cutover(PGconn* conn, int64_t id, bool reverse) {
  return update_row_if(conn, id,
                       "state = 'cutting_over', step = 'publish_migrating', cutover_attempts = "
                       "cutover_attempts + 1, rolling_back = $2",
                       "NOT $2 OR (rollback_requested AND state = 'rollback_window')",
                       {reverse ? "true" : "false"});
}

Status record_reverse_position(PGconn* conn, int64_t id, const std::string& lsn) {
  return update_row(conn, id, "reverse_lsn = $2::pg_lsn", {lsn});
}

Status abort_cutover(PGconn* conn, int64_t id, bool reverse, const std::string& why) {
  MigrationState back = reverse ? MigrationState::RollbackWindow : MigrationState::CatchingUp;
  return update_row(conn, id,
                    "state = $2, step = '', error = $3, retry_at = now() + least(interval '1 second' * "
                    "cutover_attempts, interval '30 seconds')",
                    {migration_state_name(back), "cutover aborted: " + why});
}

Status undo_interrupted_cutover(PGconn* conn, int64_t id, bool reverse) {
  return update_row(conn, id,
                    reverse ? "state = 'rollback_window', step = '', rolling_back = false"
                            : "state = 'catching_up', step = ''");
}

Status record_flip(PGconn* conn, int64_t id, bool reverse, double pause_ms, int64_t rollback_window_ms) {
  if (reverse)
    return update_row(conn, id,
                      "state = 'cleaning', step = 'flipped', error = NULL, last_pause_ms = $2, "
                      "rollback_expires_at = NULL",
                      {std::to_string(pause_ms)});
  return update_row(conn, id,
                    "state = 'rollback_window', step = 'flipped', error = NULL, last_pause_ms = $2, "
                    "rollback_expires_at = now() + $3::interval",
                    {std::to_string(pause_ms), std::to_string(rollback_window_ms) + " milliseconds"});
}

Status close_rollback_window(PGconn* conn, int64_t id) {
  return update_row(
      conn, id, "state = 'cleaning', step = 'delete_source_rows', rollback_expires_at = NULL, error = NULL");
}

Status mark_rolled_back(PGconn* conn, int64_t id) {
  return update_row(conn, id, "state = 'rolled_back', step = '', rolling_back = false, error = NULL");
}

Status request_migration(PGconn* conn, int64_t id, MigrationRequest request) {
  auto m = get_migration(conn, id);
  if (!m) return m.status();
  std::string name = "migration " + std::to_string(id);
  if (is_final(m->state)) {
    if (request == MigrationRequest::Rollback && m->state == MigrationState::Done)
      return Status::client("55000", "the rollback window of " + name +
                                         " has expired; it is done and its source rows are deleted");
    return Status::client("55000", name + " is " + migration_state_name(m->state));
  }
  bool after_flip = m->state == MigrationState::RollbackWindow || m->state == MigrationState::Cleaning;
  // The window is over once EXPIRE ROLLBACK was accepted (the runner may not have acted on it
  // yet), when its time passed, or when cleanup of the source began. A migration that is being
  // rolled back (reverse cutover, then cleaning with rolling_back) is not expired.
  bool window_closed = !m->rolling_back && (m->state == MigrationState::Cleaning ||
                                            (m->state == MigrationState::RollbackWindow &&
                                             (m->expire_requested || m->rollback_seconds_left <= 0)));
  switch (request) {
    case MigrationRequest::Pause: return update_row(conn, id, "paused = true");
    case MigrationRequest::Resume:
      if (!m->paused) return Status::client("55000", name + " is not paused");
      return update_row(conn, id, "paused = false");
    case MigrationRequest::Cancel:
      // rolling_back: a reverse cutover (state cutting_over) of a migration that flipped already.
      if (after_flip || m->rolling_back)
        return Status::client("55000",
                              name + " has cut over already; use ROLLBACK MIGRATION " + std::to_string(id));
      return update_row(conn, id, "cancel_requested = true, paused = false");
    case MigrationRequest::Rollback:
      if (m->rolling_back) return Status::client("55000", name + " is being rolled back already");
      if (window_closed)
        return Status::client(
            "55000", "the rollback window of " + name + " has expired; the source rows are being deleted");
      if (!after_flip)
        return Status::client("55000",
                              name + " has not cut over yet; use CANCEL MIGRATION " + std::to_string(id));
      // A CANCEL accepted during the forward cutover that then flipped was moot; it must not be
      // acted on should the reverse cutover be interrupted (state cutting_over again).
      return update_row(conn, id, "rollback_requested = true, paused = false, cancel_requested = false");
    case MigrationRequest::ExpireRollback:
      if (m->state != MigrationState::RollbackWindow)
        return Status::client(
            "55000", name + " is not in its rollback window (" + migration_state_name(m->state) + ")");
      {
        // An expiry withdraws a rollback request whose cutover back has not begun (one that cannot
        // succeed, e.g. its reverse stream fails, must not hold the window open). Atomic with
        // begin_cutover: the row is still in its window, or the cutover back won.
        auto expired = update_row_if(conn, id, "expire_requested = true, rollback_requested = false",
                                     "state = 'rollback_window'");
        if (!expired) return expired.status();
        if (!*expired)
          return Status::client(
              "55000", name + " is being rolled back (ROLLBACK MIGRATION " + std::to_string(id) + ")");
        return Status::ok();
      }
  }
  return Status::ok();
}

}  // namespace sw::catalog
