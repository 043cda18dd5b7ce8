#include "sqltext/catalog_sql.h"

#include <cctype>

#include "sqltext/bucket_sql.h"
#include "sqltext/id_ranges.h"

namespace sw::sqltext {
namespace {

const char* const kCatalogSchema = R"SQL(
CREATE SCHEMA IF NOT EXISTS shardwire;

CREATE TABLE IF NOT EXISTS shardwire.directory_version (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  version bigint NOT NULL CHECK (version >= 0)
);
INSERT INTO shardwire.directory_version (id, version) VALUES (true, 0) ON CONFLICT (id) DO NOTHING;

-- full_since: the version of the latest change an incremental directory load cannot follow (a
-- bucket row deleted or truncated); a router holding an older version loads the whole directory.
-- Added by an upgrade at the current version, so no router skips a deletion made before it.
DO $upgrade$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'shardwire.directory_version'::regclass
                 AND attname = 'full_since' AND NOT attisdropped) THEN
    ALTER TABLE shardwire.directory_version ADD COLUMN full_since bigint NOT NULL DEFAULT 0;
    UPDATE shardwire.directory_version SET full_since = version;
  END IF;
END
$upgrade$;

CREATE TABLE IF NOT EXISTS shardwire.buckets (
  bucket integer PRIMARY KEY CHECK (bucket >= 0),
  shard text NOT NULL,
  state text NOT NULL DEFAULT 'ACTIVE' CHECK (state IN ('ACTIVE', 'MIGRATING')),
  version bigint NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS shardwire.routers (
  id text PRIMARY KEY,
  directory_version bigint NOT NULL,
  heartbeat_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz NOT NULL DEFAULT now(),
  host text NOT NULL DEFAULT '',
  port integer,
  pid integer
);

CREATE TABLE IF NOT EXISTS shardwire.migrations (
  id bigserial PRIMARY KEY,
  state text NOT NULL,
  source text NOT NULL,
  target text NOT NULL,
  buckets integer[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  error text,
  steps jsonb NOT NULL DEFAULT '{}'::jsonb
);
-- The mover's state machine (docs/architecture.md §8); every column is written before the step it describes.
ALTER TABLE shardwire.migrations
  ADD COLUMN IF NOT EXISTS step text NOT NULL DEFAULT '',
  ADD COLUMN IF NOT EXISTS slot text NOT NULL DEFAULT '',
  ADD COLUMN IF NOT EXISTS publication text NOT NULL DEFAULT '',
  ADD COLUMN IF NOT EXISTS consistent_lsn pg_lsn,
  ADD COLUMN IF NOT EXISTS rows_copied bigint NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS rows_total bigint NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS bytes_copied bigint NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS lag_bytes bigint NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS lag_seconds double precision NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS paused boolean NOT NULL DEFAULT false,
  ADD COLUMN IF NOT EXISTS cancel_requested boolean NOT NULL DEFAULT false,
  ADD COLUMN IF NOT EXISTS rollback_requested boolean NOT NULL DEFAULT false,
  ADD COLUMN IF NOT EXISTS expire_requested boolean NOT NULL DEFAULT false,
  ADD COLUMN IF NOT EXISTS cutover_attempts integer NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS last_pause_ms double precision,
  ADD COLUMN IF NOT EXISTS retry_at timestamptz,
  ADD COLUMN IF NOT EXISTS rollback_expires_at timestamptz,
  ADD COLUMN IF NOT EXISTS reverse_slot text NOT NULL DEFAULT '',
  ADD COLUMN IF NOT EXISTS reverse_publication text NOT NULL DEFAULT '',
  ADD COLUMN IF NOT EXISTS reverse_lsn pg_lsn,
  ADD COLUMN IF NOT EXISTS rolling_back boolean NOT NULL DEFAULT false,
  ADD COLUMN IF NOT EXISTS copy_started_at timestamptz,
  ADD COLUMN IF NOT EXISTS copy_progress_at timestamptz;
CREATE INDEX IF NOT EXISTS migrations_active ON shardwire.migrations (id)
  WHERE state NOT IN ('done', 'failed', 'cancelled', 'rolled_back');

-- Two-phase commit decisions (docs/architecture.md §7.8): a cross-shard write's
-- coordinator inserts 'commit' after every written leg prepared; recovery inserts 'abort' for a
-- shardwire gid prepared longer than the grace period without a decision. Both use ON CONFLICT
-- (gid) DO NOTHING, so the first decision wins. A row is deleted once no shard holds its gid.
CREATE TABLE IF NOT EXISTS shardwire.transactions (
  gid text PRIMARY KEY,
  shards text[] NOT NULL,
  decision text NOT NULL CHECK (decision IN ('commit', 'abort')),
  decided_at timestamptz NOT NULL DEFAULT now()
);

-- The directory version of the current transaction: bumped (and NOTIFYed) on first use, the
-- same value for every later change in the transaction.
CREATE OR REPLACE FUNCTION shardwire.bump_directory_version() RETURNS bigint
LANGUAGE plpgsql AS $fn$
DECLARE
  tx text := pg_current_xact_id()::text;
  pending text := current_setting('shardwire.pending_version', true);
  v bigint;
BEGIN
  IF pending IS NOT NULL AND split_part(pending, ':', 1) = tx THEN
    RETURN split_part(pending, ':', 2)::bigint;
  END IF;
  UPDATE shardwire.directory_version SET version = version + 1 RETURNING version INTO v;
  PERFORM set_config('shardwire.pending_version', tx || ':' || v, true);
  PERFORM pg_notify('shardwire_directory', v::text);
  RETURN v;
END
$fn$;

CREATE OR REPLACE FUNCTION shardwire.buckets_row_changed() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
  NEW.version := shardwire.bump_directory_version();
  RETURN NEW;
END
$fn$;

CREATE OR REPLACE FUNCTION shardwire.buckets_removed() RETURNS trigger
LANGUAGE plpgsql AS $fn$
DECLARE
  v bigint := shardwire.bump_directory_version();  -- updates the row itself: not inside the UPDATE below
BEGIN
  UPDATE shardwire.directory_version SET full_since = v;
  RETURN NULL;
END
$fn$;

-- A router's acknowledgement: NOTIFY shardwire_routers '<version>' when its reported directory
-- version changes, so a cutover waiting for acknowledgements wakes at once.
CREATE OR REPLACE FUNCTION shardwire.router_version_changed() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'INSERT' OR NEW.directory_version IS DISTINCT FROM OLD.directory_version THEN
    PERFORM pg_notify('shardwire_routers', NEW.directory_version::text);
  END IF;
  RETURN NULL;
END
$fn$;

CREATE OR REPLACE TRIGGER buckets_version BEFORE INSERT OR UPDATE ON shardwire.buckets
  FOR EACH ROW EXECUTE FUNCTION shardwire.buckets_row_changed();
CREATE OR REPLACE TRIGGER buckets_removed AFTER DELETE OR TRUNCATE ON shardwire.buckets
  FOR EACH STATEMENT EXECUTE FUNCTION shardwire.buckets_removed();
CREATE OR REPLACE TRIGGER routers_version AFTER INSERT OR UPDATE OF directory_version ON shardwire.routers
  FOR EACH ROW EXECUTE FUNCTION shardwire.router_version_changed();
)SQL";

// After bucket_function_sql() (which creates the schema and bucket_of).
const char* const kShardSchema = R"SQL(
CREATE SCHEMA IF NOT EXISTS shardwire;

CREATE TABLE IF NOT EXISTS shardwire.fenced_buckets (
  bucket integer PRIMARY KEY CHECK (bucket >= 0),
  version bigint NOT NULL DEFAULT 0,
  fenced_at timestamptz NOT NULL DEFAULT now(),
  holds_rows boolean NOT NULL DEFAULT true
);
-- holds_rows: false only while the bucket's rows are known to be absent from this shard (scatter
-- reads then skip the fence in their owned-rows filter). A shard set up by an older version gets
-- it as true on every fence: its fences' rows are not known. Checked first so a re-run takes no
-- lock on the table (every write's fence trigger reads it).
DO $upgrade$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'shardwire.fenced_buckets'::regclass
                 AND attname = 'holds_rows' AND NOT attisdropped) THEN
    ALTER TABLE shardwire.fenced_buckets ADD COLUMN holds_rows boolean NOT NULL DEFAULT true;
  END IF;
END
$upgrade$;

CREATE OR REPLACE FUNCTION shardwire.install_fence(tbl regclass, key_column text, key_type text, buckets integer)
RETURNS text LANGUAGE plpgsql AS $install$
DECLARE
  cast_type text;
  nsp name;
  rel name;
  fn_name text;
  fn_oid oid;
  body text;
  result text := 'unchanged';
BEGIN
  cast_type := CASE lower(key_type)
    WHEN 'smallint' THEN 'int2' WHEN 'int2' THEN 'int2'
    WHEN 'integer' THEN 'int4' WHEN 'int' THEN 'int4' WHEN 'int4' THEN 'int4'
    WHEN 'bigint' THEN 'int8' WHEN 'int8' THEN 'int8'
    WHEN 'text' THEN 'text' WHEN 'varchar' THEN 'text' WHEN 'character varying' THEN 'text'
    WHEN 'uuid' THEN 'uuid' END;
  IF cast_type IS NULL THEN
    RAISE EXCEPTION 'shardwire.install_fence: unsupported key type "%"', key_type USING ERRCODE = '22023';
  END IF;
  IF buckets IS NULL OR buckets < 1 THEN
    RAISE EXCEPTION 'shardwire.install_fence: buckets must be positive' USING ERRCODE = '22023';
  END IF;
  PERFORM 1 FROM pg_attribute a
    WHERE a.attrelid = tbl AND a.attname = key_column AND a.attnum > 0 AND NOT a.attisdropped;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'shardwire.install_fence: column "%" of relation % does not exist', key_column, tbl
      USING ERRCODE = '42703';
  END IF;
  SELECT n.nspname, c.relname INTO nsp, rel
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = tbl;
  fn_name := left('fence_' || nsp || '_' || rel, 63);
  body := format($tmpl$
DECLARE
  b integer;
  v bigint;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    b := shardwire.bucket_of((OLD.%1$I)::%2$s, %3$s);
    SELECT f.version INTO v FROM shardwire.fenced_buckets f WHERE f.bucket = b;
    IF FOUND THEN
      RAISE EXCEPTION USING ERRCODE = 'SW001',
        MESSAGE = format('bucket %%s is not owned by this shard; directory version %%s', b, v),
        HINT = 'refresh the shardwire directory and retry on the owning shard',
        SCHEMA = TG_TABLE_SCHEMA, TABLE = TG_TABLE_NAME;
    END IF;
    IF TG_OP = 'DELETE' THEN
      RETURN OLD;
    END IF;
    IF NEW.%1$I IS NOT DISTINCT FROM OLD.%1$I THEN
      RETURN NEW;
    END IF;
  END IF;
  b := shardwire.bucket_of((NEW.%1$I)::%2$s, %3$s);
  SELECT f.version INTO v FROM shardwire.fenced_buckets f WHERE f.bucket = b;
  IF FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'SW001',
      MESSAGE = format('bucket %%s is not owned by this shard; directory version %%s', b, v),
      HINT = 'refresh the shardwire directory and retry on the owning shard',
      SCHEMA = TG_TABLE_SCHEMA, TABLE = TG_TABLE_NAME;
  END IF;
  RETURN NEW;
END
$tmpl$, key_column, cast_type, buckets);

  fn_oid := to_regprocedure(format('shardwire.%I()', fn_name));
  IF fn_oid IS NULL OR (SELECT p.prosrc FROM pg_proc p WHERE p.oid = fn_oid) IS DISTINCT FROM body THEN
    EXECUTE format('CREATE OR REPLACE FUNCTION shardwire.%I() RETURNS trigger LANGUAGE plpgsql AS %L',
                   fn_name, body);
    fn_oid := to_regprocedure(format('shardwire.%I()', fn_name));
    result := 'updated';
  END IF;
  -- The trigger is (re)created only when missing or calling another function: re-running takes
  -- no lock on the table.
  IF NOT EXISTS (SELECT 1 FROM pg_trigger t
                 WHERE t.tgrelid = tbl AND t.tgname = 'shardwire_fence' AND t.tgfoid = fn_oid) THEN
    IF NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = tbl AND t.tgname = 'shardwire_fence') THEN
      result := 'created';
    ELSE
      result := 'updated';
    END IF;
    EXECUTE format('CREATE OR REPLACE TRIGGER shardwire_fence BEFORE INSERT OR UPDATE OR DELETE ON %s '
                   'FOR EACH ROW EXECUTE FUNCTION shardwire.%I()', tbl, fn_name);
  END IF;
  -- A sharded table's sequences get this shard's id range wherever the fence is installed (init,
  -- and the proxy right after it created the table). shardwire init records the slot before it
  -- installs a fence; a schema installed by hand without a slot leaves the sequences alone.
  IF EXISTS (SELECT 1 FROM shardwire.id_slot) THEN
    PERFORM 1 FROM shardwire.assign_id_ranges(tbl);
  END IF;
  RETURN result;
END
$install$;
)SQL";

}  // namespace

std::string catalog_schema_sql() { return kCatalogSchema + id_slots_catalog_sql(); }

std::string shard_schema_sql() { return bucket_function_sql() + "\n" + kShardSchema + id_ranges_shard_sql(); }

std::string quote_literal(const std::string& text) {
  bool backslash = text.find('\\') != std::string::npos;
  std::string out = backslash ? "E'" : "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    if (c == '\\') out += '\\';
    out += c;
  }
  out += '\'';
  return out;
}

std::string int_array_literal(const std::vector<int>& items) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(items[i]);
  }
  out += '}';
  return out;
}

std::string quote_identifier(const std::string& name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

Result<std::string> bucket_expression(const config::ShardedTable& table, uint32_t bucket_count) {
  // The key types bucket_of has overloads for (varchar hashes as text).
  static const std::pair<const char*, const char*> kCasts[] = {
      {"smallint", "smallint"}, {"int2", "smallint"},          {"integer", "integer"}, {"int", "integer"},
      {"int4", "integer"},      {"bigint", "bigint"},          {"int8", "bigint"},     {"text", "text"},
      {"varchar", "text"},      {"character varying", "text"}, {"uuid", "uuid"}};
  std::string type = table.type;
  for (char& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& [name, cast] : kCasts) {
    if (type == name) {
      return "shardwire.bucket_of(" + quote_identifier(table.key) + "::" + cast + ", " +
             std::to_string(bucket_count) + ")";
    }
  }
  return Status::client("22023",
                        "table " + table.name + ": unsupported shard key type \"" + table.type + "\"");
}

std::string bucket_index_statement(const config::ShardedTable& table, int buckets) {
  auto expression = bucket_expression(table, static_cast<uint32_t>(buckets));
  if (!expression) return "SELECT 1";  // config validation admits only key types bucket_of takes
  std::string name = "shardwire_buckets_" + table.name.substr(table.name.rfind('.') + 1);
  if (name.size() > 63) name.resize(63);
  return "CREATE INDEX IF NOT EXISTS " + quote_identifier(name) + " ON " + table.name + " ((" + *expression +
         "))";
}

Result<std::string> mark_fences_holding_rows_sql(const config::ShardedTable& table, uint32_t bucket_count) {
  auto expression = bucket_expression(table, bucket_count);
  if (!expression) return expression.status();
  return "LOCK TABLE " + table.name +
         " IN SHARE MODE; UPDATE shardwire.fenced_buckets sw_fenced SET holds_rows = true "
         "WHERE NOT sw_fenced.holds_rows AND EXISTS (SELECT 1 FROM " +
         table.name + " WHERE " + *expression + " = sw_fenced.bucket)";
}

std::string install_fence_statement(const config::ShardedTable& table, int buckets) {
  return "SELECT shardwire.install_fence(" + quote_literal(table.name) + "::regclass, " +
         quote_literal(table.key) + ", " + quote_literal(table.type) + ", " + std::to_string(buckets) + ")";
}

}  // namespace sw::sqltext
