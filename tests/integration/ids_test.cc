// Globally unique ids (docs/architecture.md "Globally unique ids"): `shardwire init` gives each
// shard an id slot and bounds every sequence of a sharded table to the slot's range, a table
// created through shardwire gets its ranges at once, bucket moves keep every shard's sequence
// inside its own range, and a shard added later gets the next slot. Checked by reading every
// shard directly.
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "harness/mover_helpers.h"
#include "harness/sharded_fixture.h"
#include "it_test.h"
#include "sqltext/id_ranges.h"

using namespace it;
namespace sqltext = sw::sqltext;

namespace {

constexpr int kOldShards = 4;
constexpr int kAllShards = 5;
constexpr int kBatch = 20;  // rows per INSERT (one tenant each, so one shard)

const char* const kTables =
    "    - name: orders\n      key: tenant_id\n      type: bigint\n"
    "    - name: events\n      key: tenant_id\n      type: bigint\n"
    "    - name: tickets\n      key: tenant_id\n      type: bigint\n";
const char* const kCreateEvents =
    "CREATE TABLE events (tenant_id bigint NOT NULL, id bigint GENERATED ALWAYS AS IDENTITY, "
    "PRIMARY KEY (tenant_id, id))";
const char* const kCreateTickets =
    "CREATE TABLE tickets (tenant_id bigint NOT NULL, id serial, PRIMARY KEY (tenant_id, id))";

uint32_t bucket_of4(int64_t key) { return bucket_of_key(key); }

// A deployment of 4 shards (s4 exists but is not configured yet) with the console and the mover.
struct Deployment {
  ShardedSetup setup;
  std::unique_ptr<ProxyProcess> proxy;

  static ShardedOptions options() {
    MoverKnobs knobs;
    knobs.rollback_window = "1s";
    ShardedOptions o = mover_options(knobs);
    o.shards = kAllShards;
    o.tables_yaml = kTables;
    return o;
  }
  Deployment() : setup(shared_cluster(), options()) {
    setup.init_or_throw("", kOldShards);
    proxy = std::make_unique<ProxyProcess>(setup.cluster().port(), setup.proxy_options("", kOldShards));
  }
  PgConn client() const {
    ConnectResult r = connect(proxy->conninfo("app", "secret", "sslmode=disable"));
    if (!r.ok) throw std::runtime_error("connect through shardwire: " + r.error + "\n" + proxy->log_tail());
    return std::move(r.conn);
  }
  PgConn console() const {
    ConnectResult r = connect(proxy->conninfo("admin", "adminpw", "sslmode=disable dbname=shardwire"));
    if (!r.ok) throw std::runtime_error("admin connect: " + r.error + "\n" + proxy->log_tail());
    return std::move(r.conn);
  }
};

// What the writers were told: every id RETURNING gave them, per table.
struct Acknowledged {
  std::mutex mutex;
  std::map<std::string, std::vector<long long>> ids;  // table -> ids
  std::map<std::string, int> errors;                  // SQLSTATE -> count
  std::atomic<long long> rows{0};
};

void write_rows(Deployment& d, const std::vector<int64_t>& keys, int thread, int statements,
                Acknowledged& ack) {
  PgConn c = d.client();
  for (int i = 0; i < statements; ++i) {
    const std::string key = std::to_string(keys[static_cast<size_t>(i * 5 + thread) % keys.size()]);
    std::string sql;
    std::string table;
    if (i % 10 == 9) {
      table = "events";
      sql = "INSERT INTO events (tenant_id) VALUES (" + key + ") RETURNING id";
    } else {
      table = "orders";
      sql = "INSERT INTO orders (tenant_id, note) VALUES ";
      for (int r = 0; r < kBatch; ++r)
        sql += std::string(r ? ", " : "") + "(" + key + ", 'w" + std::to_string(thread) + "')";
      sql += " RETURNING id";
    }
    PgResult res = c.exec(sql);
    std::lock_guard<std::mutex> lock(ack.mutex);
    if (!res.ok()) {
      ++ack.errors[res.sqlstate().empty() ? res.error() : res.sqlstate()];
      continue;
    }
    for (int r = 0; r < res.rows(); ++r) ack.ids[table].push_back(std::stoll(res.value(r, 0)));
    ack.rows += res.rows();
  }
}

// Runs `threads` writers of `statements` statements each; `during` runs once `start_after` rows
// are acknowledged (the bucket move), while they write.
template <typename During>
void write_while(Deployment& d, const std::vector<int64_t>& keys, int threads, int statements,
                 Acknowledged& ack, long long start_after, During during) {
  std::vector<std::thread> writers;
  writers.reserve(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) writers.emplace_back([&, t] { write_rows(d, keys, t, statements, ack); });
  wait_until([&] { return ack.rows.load() >= start_after; }, 120s, 10ms);
  try {
    during();
  } catch (...) {  // a failed REQUIRE: the writers end by themselves (a bounded number of statements)
    for (auto& w : writers) w.join();
    throw;
  }
  for (auto& w : writers) w.join();
}

// Every id of `table` on every shard that has it, read directly.
std::vector<long long> ids_on_shards(const Deployment& d, int shards, const std::string& table) {
  std::vector<long long> ids;
  for (int s = 0; s < shards; ++s) {
    PgConn c = d.setup.shard(s);
    PgResult r = c.exec("SELECT id FROM " + table);
    REQUIRE_MESSAGE(r.ok(), "s" << s << ": " << r.describe());
    for (const auto& row : r.data()) ids.push_back(std::stoll(row.at(0)));
  }
  return ids;
}

std::vector<long long> duplicates(std::vector<long long> ids) {
  std::sort(ids.begin(), ids.end());
  std::vector<long long> out;
  for (size_t i = 1; i < ids.size(); ++i)
    if (ids[i] == ids[i - 1] && (out.empty() || out.back() != ids[i])) out.push_back(ids[i]);
  return out;
}

// The sequence behind `table`.id on shard s: "min max last_value".
struct SequenceState {
  long long min = 0, max = 0, last = 0;
};
SequenceState sequence_on(const Deployment& d, int s, const std::string& table) {
  PgConn c = d.setup.shard(s);
  PgResult r = c.exec(
      "SELECT q.seqmin, q.seqmax, (SELECT coalesce(last_value, 0) FROM pg_sequences p WHERE "
      "p.schemaname || '.' || p.sequencename = pg_get_serial_sequence('" +
      table + "', 'id')) FROM pg_sequence q WHERE q.seqrelid = pg_get_serial_sequence('" + table +
      "', 'id')::regclass");
  REQUIRE_MESSAGE(r.ok(), "s" << s << " " << table << ": " << r.describe());
  REQUIRE(r.rows() == 1);
  return {std::stoll(r.value(0, 0)), std::stoll(r.value(0, 1)), std::stoll(r.value(0, 2))};
}

// Every shard's sequence of `table` is bounded to its slot's range and has stayed inside it.
void check_sequences_in_range(const Deployment& d, int shards, const std::string& table,
                              sqltext::SequenceType type) {
  for (int s = 0; s < shards; ++s) {
    INFO("shard s" << s << ", table " << table);
    auto range = sqltext::id_range(static_cast<uint32_t>(s), type);
    REQUIRE(range.has_value());
    SequenceState seq = sequence_on(d, s, table);
    CHECK(seq.min == range->first);
    CHECK(seq.max == range->last);
    CHECK((seq.last == 0 || (seq.last >= range->first && seq.last <= range->last)));
  }
}

void move_and_wait(Deployment& d, const std::vector<uint32_t>& buckets, const std::string& target) {
  PgConn admin = d.console();
  const std::string id = start_move(admin, buckets, target);
  std::string last;
  REQUIRE_MESSAGE(wait_for_state(admin, id, "done", 180s, &last), "migration " << id << " to " << target
                                                                               << ": " << last << "\n"
                                                                               << d.proxy->log_tail(60));
}

// The README's "Adding a shard": s4 in the config, shardwire init, RELOAD, CREATE TABLE IF NOT
// EXISTS through shardwire (which bounds the new tables' sequences on s4 at once).
void add_fifth_shard(Deployment& d) {
  d.proxy->write_config(
      render_config(d.setup.proxy_options("", kAllShards), d.proxy->port(), d.setup.cluster().port()));
  CommandResult init = d.setup.init("", kAllShards);
  REQUIRE_MESSAGE(init.exit_code == 0, init.describe());
  CHECK(contains(init.out, "shard s4: 0 buckets owned; schema shardwire created"));
  PgConn admin = d.console();
  REQUIRE_OK(admin.exec("RELOAD"));
  PgConn c = d.client();
  for (std::string ddl :
       {std::string(kCreateOrders), std::string(kCreateEvents), std::string(kCreateTickets)}) {
    ddl.replace(ddl.find("CREATE TABLE"), 12, "CREATE TABLE IF NOT EXISTS");
    REQUIRE_OK(c.exec(ddl));
  }
}

}  // namespace

TEST_SUITE("ids") {
  TEST_CASE("ids stay unique across 4 shards, bucket moves both ways and a fifth shard added later") {
    PROXY_ONLY();
    Deployment d;
    INFO("proxy log:\n" << d.proxy->log_tail(80));

    // Slots in config order, recorded in the catalog.
    PgConn catalog = d.setup.catalog();
    CHECK(
        catalog.value("SELECT string_agg(shard || '=' || slot, ',' ORDER BY slot) FROM shardwire.id_slots") ==
        "s0=0,s1=1,s2=2,s3=3");

    // Tables created through shardwire: their sequences are bounded on every shard at once.
    {
      PgConn c = d.client();
      REQUIRE_OK(c.exec(kCreateOrders));
      REQUIRE_OK(c.exec(kCreateEvents));
      REQUIRE_OK(c.exec(kCreateTickets));
    }
    check_sequences_in_range(d, kOldShards, "orders", sqltext::SequenceType::Int8);
    check_sequences_in_range(d, kOldShards, "events", sqltext::SequenceType::Int8);
    check_sequences_in_range(d, kOldShards, "tickets", sqltext::SequenceType::Int4);

    // init again: nothing to change, and the integer sequence is warned about with what to do.
    CommandResult again = d.setup.init("", kOldShards);
    REQUIRE_MESSAGE(again.exit_code == 0, again.describe());
    for (uint32_t slot = 0; slot < kOldShards; ++slot) {
      auto range = sqltext::id_range(slot, sqltext::SequenceType::Int8);
      CHECK(contains(again.out, "orders: sequence orders_id_seq bigint " + std::to_string(range->first) +
                                    ".." + std::to_string(range->last) + ": unchanged"));
    }
    CHECK(contains(again.out, "WARNING: table tickets: sequence tickets_id_seq is integer"));
    CHECK(contains(again.out, "ALTER SEQUENCE tickets_id_seq AS bigint"));
    CHECK_FALSE(contains(again.out, "max_prepared_transactions"));  // the harness sets 10

    // Writers on keys of every shard, among them keys of 6 buckets of s2 that move to s0 (a
    // higher slot's ids copied onto a lower slot's shard) while they write.
    std::vector<int64_t> keys = keys_in_distinct_buckets(24, [](uint32_t b) { return b % kOldShards != 2; });
    const std::vector<int64_t> moving =
        keys_in_distinct_buckets(6, [](uint32_t b) { return b % kOldShards == 2; });
    keys.insert(keys.end(), moving.begin(), moving.end());
    std::vector<uint32_t> buckets;
    buckets.reserve(moving.size());
    for (int64_t k : moving) buckets.push_back(bucket_of4(k));

    Acknowledged ack;
    write_while(d, keys, 6, 700, ack, 5000, [&] { move_and_wait(d, buckets, "s0"); });
    INFO("errors: " << ack.errors.size());
    CHECK(ack.errors.empty());
    check_sequences_in_range(d, kOldShards, "orders", sqltext::SequenceType::Int8);
    check_sequences_in_range(d, kOldShards, "events", sqltext::SequenceType::Int8);

    // A fifth shard: the next slot, in the catalog and on the shard.
    add_fifth_shard(d);
    CHECK(catalog.value("SELECT slot FROM shardwire.id_slots WHERE shard = 's4'") == "4");
    CHECK(d.setup.shard(4).value("SELECT shard || '=' || slot FROM shardwire.id_slot") == "s4=4");
    check_sequences_in_range(d, kAllShards, "orders", sqltext::SequenceType::Int8);
    {
      PgConn admin = d.console();
      PgResult shown = admin.exec("SHOW SEQUENCES");
      REQUIRE_OK(shown);
      REQUIRE(shown.rows() == kAllShards);
      auto s4 = sqltext::id_range(4, sqltext::SequenceType::Int8);
      auto s4_int = sqltext::id_range(4, sqltext::SequenceType::Int4);
      CHECK(shown.value(4, 0) == "s4");
      CHECK(shown.value(4, 1) == "4");
      CHECK(shown.value(4, 2) == std::to_string(s4->first));
      CHECK(shown.value(4, 3) == std::to_string(s4->last));
      CHECK(shown.value(4, 4) == std::to_string(s4_int->first));
      CHECK(shown.value(4, 5) == std::to_string(s4_int->last));
    }

    // The moved buckets (now on s0, with ids of s0's and s2's ranges) move on to s4 while more
    // rows come in, then a last round of inserts lands on every shard, s4 included.
    write_while(d, keys, 6, 400, ack, ack.rows.load() + 3000, [&] { move_and_wait(d, buckets, "s4"); });
    write_rows(d, keys, 0, 300, ack);
    CHECK(ack.errors.empty());
    for (const char* table : {"orders", "events"}) {
      INFO("table " << table);
      check_sequences_in_range(d, kAllShards, table, sqltext::SequenceType::Int8);
      const std::vector<long long> stored = ids_on_shards(d, kAllShards, table);
      CHECK(duplicates(ack.ids[table]).empty());
      CHECK(duplicates(stored).empty());
      CHECK(stored.size() == ack.ids[table].size());
      std::set<long long> stored_set(stored.begin(), stored.end());
      for (long long id : ack.ids[table]) {
        if (!stored_set.count(id)) {
          FAIL_CHECK("acknowledged id " << id << " is on no shard");
          break;
        }
      }
    }
    MESSAGE("rows acknowledged: " << ack.rows.load() << " (orders " << ack.ids["orders"].size() << ", events "
                                  << ack.ids["events"].size() << ")");
    CHECK(ack.rows.load() >= 100000);
    // s4 numbered rows in its own range.
    auto s4 = sqltext::id_range(4, sqltext::SequenceType::Int8);
    CHECK(std::stoll(d.setup.shard(4).value("SELECT count(*) FROM orders WHERE id BETWEEN " +
                                            std::to_string(s4->first) + " AND " + std::to_string(s4->last))) >
          0);
  }

  TEST_CASE(
      "a shard with max_prepared_transactions = 0: init and the proxy at start say it needs > 0 and how") {
    PROXY_ONLY();
    PgCluster no_2pc;
    REQUIRE_OK(no_2pc.admin().exec("ALTER SYSTEM SET max_prepared_transactions = 0"));
    no_2pc.stop();
    no_2pc.start();
    REQUIRE(no_2pc.admin().value("SHOW max_prepared_transactions") == "0");
    ShardedOptions options;
    options.shards = 2;
    options.shard_clusters = {nullptr, &no_2pc};
    ShardedSetup setup(shared_cluster(), options);
    CommandResult init = setup.init();
    REQUIRE_MESSAGE(init.exit_code == 0, init.describe());
    CHECK(contains(init.out, "WARNING: shard s1: max_prepared_transactions is 0"));
    CHECK_FALSE(contains(init.out, "shard s0: max_prepared_transactions"));
    std::unique_ptr<ProxyProcess> proxy = setup.start_proxy();
    CHECK(proxy->wait_for_log(
        "shard s1: max_prepared_transactions is 0; transactions that write on several shards "
        "will commit with two-phase commit",
        10s));
  }

  TEST_CASE(
      "a nextval() default and a serial column added later are bounded too; a database holding another slot "
      "is "
      "refused") {
    PROXY_ONLY();
    ShardedFixture f;
    for (int s = 0; s < f.setup.shards(); ++s) REQUIRE_OK(f.setup.shard(s).exec("CREATE SEQUENCE note_ids"));
    PgConn c = f.client();
    REQUIRE_OK(c.exec(
        "CREATE TABLE notes (tenant_id bigint NOT NULL, id bigint NOT NULL DEFAULT nextval('note_ids'), "
        "PRIMARY KEY (tenant_id, id))"));
    // notes is not a configured sharded table: it lives on the default shard, untouched.
    CHECK(f.setup.shard(0).value("SELECT seqmin FROM pg_sequence WHERE seqrelid = 'note_ids'::regclass") ==
          "1");
    // On a shard, assign_id_ranges follows the default to the sequence.
    PgConn s1 = f.setup.shard(1);
    REQUIRE_OK(s1.exec(
        "CREATE TABLE notes (tenant_id bigint NOT NULL, id bigint NOT NULL DEFAULT nextval('note_ids'))"));
    PgResult assigned = s1.exec("SELECT seq_name, action FROM shardwire.assign_id_ranges('notes')");
    REQUIRE_OK(assigned);
    REQUIRE(assigned.rows() == 1);
    CHECK(assigned.value(0, 0) == "note_ids");
    CHECK(assigned.value(0, 1) == "restarted");
    auto range = sqltext::id_range(1, sqltext::SequenceType::Int8);
    CHECK(std::stoll(s1.value("SELECT nextval('note_ids')")) == range->first);
    CHECK(s1.value("SELECT seqmax FROM pg_sequence WHERE seqrelid = 'note_ids'::regclass") ==
          std::to_string(range->last));

    // A serial column added later through shardwire (ALTER TABLE on every shard) is bounded at once
    // by the shards' event trigger (the harness's shard login is a superuser).
    REQUIRE_OK(c.exec("ALTER TABLE orders ADD COLUMN serial_no bigserial"));
    for (int s = 0; s < f.setup.shards(); ++s) {
      INFO("shard s" << s);
      auto r = sqltext::id_range(static_cast<uint32_t>(s), sqltext::SequenceType::Int8);
      CHECK(f.setup.shard(s).value("SELECT seqmin || ' ' || seqmax FROM pg_sequence WHERE seqrelid = "
                                   "pg_get_serial_sequence('orders', 'serial_no')::regclass") ==
            std::to_string(r->first) + " " + std::to_string(r->last));
    }

    // A shard database that holds another slot (initialized as another shard) is refused.
    REQUIRE_OK(s1.exec("UPDATE shardwire.id_slot SET slot = 7, shard = 's7'"));
    CommandResult init = f.setup.init();
    CHECK(init.exit_code != 0);
    CHECK(contains(init.out + init.err,
                   "holds id slot 7 (recorded for shard \"s7\"), but the catalog gives shard s1 slot 1"));
  }
}
