// The pgoutput decoder (proxy/wire/pgoutput.h) against a real PostgreSQL 15 stream: a
// publication and a temporary logical slot, changes of every kind (insert, update with an
// unchanged TOAST column, update of the key, REPLICA IDENTITY FULL update/delete, truncate,
// logical decoding messages), read over a `replication=database` libpq connection with
// START_REPLICATION and PQgetCopyData, every message decoded. The standby status update is checked
// by the slot's confirmed_flush_lsn moving to what it reported. A second case streams a large
// transaction with proto_version '2', streaming 'on'.
#include "it_test.h"

#include <poll.h>

#include <functional>
#include <vector>

#include "wire/pgoutput.h"

using namespace it;
namespace pgo = sw::wire::pgoutput;

namespace {

// A replication connection on a temporary slot (dropped when the connection ends).
class ReplicationStream {
 public:
  ReplicationStream(const PgCluster& pg, const std::string& db, const std::string& extra_options = "") {
    std::string conninfo = pg.conninfo(db) + " replication=database";
    if (!extra_options.empty()) conninfo += " options='" + extra_options + "'";
    conn_ = connect_or_throw(conninfo);
    REQUIRE_OK(
        conn_.exec("CREATE_REPLICATION_SLOT sw_it_slot TEMPORARY LOGICAL pgoutput (SNAPSHOT 'nothing')"));
  }

  void start(const std::string& options) {
    const std::string sql = "START_REPLICATION SLOT sw_it_slot LOGICAL 0/0 (" + options + ")";
    PGresult* res = PQexec(conn_.get(), sql.c_str());
    const ExecStatusType status = PQresultStatus(res);
    PQclear(res);
    REQUIRE_MESSAGE(status == PGRES_COPY_BOTH, sql << ": " << conn_.error_message());
  }

  // Decodes the stream until `done` says so (checked after each pgoutput message) or 30 s pass;
  // answers keepalives that ask for a reply.
  void read_until(const std::function<bool(const std::vector<pgo::Message>&)>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done(messages)) {
      REQUIRE_MESSAGE(std::chrono::steady_clock::now() < deadline,
                      "stream ended early: " << messages.size() << " messages decoded");
      char* buf = nullptr;
      const int n = PQgetCopyData(conn_.get(), &buf, /*async=*/1);
      if (n == 0) {
        pollfd pfd{PQsocket(conn_.get()), POLLIN, 0};
        poll(&pfd, 1, 100);
        REQUIRE_MESSAGE(PQconsumeInput(conn_.get()) == 1, conn_.error_message());
        continue;
      }
      REQUIRE_MESSAGE(n > 0, "PQgetCopyData: " << conn_.error_message());
      const std::string payload(buf, static_cast<size_t>(n));
      PQfreemem(buf);
      handle(payload);
    }
  }

  // Reports `lsn` as written, flushed and applied.
  void confirm(pgo::Lsn lsn) {
    std::string update;
    pgo::encode_standby_status_update(update, {lsn, lsn, lsn, now(), false});
    REQUIRE(update.size() == 34);
    REQUIRE(PQputCopyData(conn_.get(), update.data(), static_cast<int>(update.size())) == 1);
    REQUIRE(PQflush(conn_.get()) == 0);
  }

  std::vector<pgo::Message> messages;
  int keepalives = 0;

 private:
  static pgo::PgTimestamp now() {
    const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
    return pgo::pg_timestamp_from_unix_micros(
        std::chrono::duration_cast<std::chrono::microseconds>(since_epoch).count());
  }

  void handle(const std::string& payload) {
    auto envelope = pgo::decode_replication_message(payload);
    REQUIRE_MESSAGE(envelope.is_ok(), envelope.status().message);
    if (auto* keepalive = std::get_if<pgo::PrimaryKeepalive>(&*envelope)) {
      ++keepalives;
      CHECK(keepalive->wal_end > 0);
      if (keepalive->reply_requested) confirm(last_end_);
      return;
    }
    const auto& xlog = std::get<pgo::XLogData>(*envelope);
    auto message = decoder_.decode(xlog.data);
    REQUIRE_MESSAGE(message.is_ok(), message.status().message);
    if (auto* commit = std::get_if<pgo::Commit>(&*message)) last_end_ = commit->end_lsn;
    messages.push_back(std::move(*message));
  }

  PgConn conn_;
  pgo::Decoder decoder_;
  pgo::Lsn last_end_ = 0;
};

template <typename T>
std::vector<T> all_of(const std::vector<pgo::Message>& messages) {
  std::vector<T> out;
  for (const auto& m : messages)
    if (const T* t = std::get_if<T>(&m)) out.push_back(*t);
  return out;
}

template <typename T>
size_t count_of(const std::vector<pgo::Message>& messages) {
  return all_of<T>(messages).size();
}

void check_text(const pgo::ColumnValue& v, const std::string& text) {
  CHECK(v.kind == pgo::ColumnKind::Text);
  CHECK(v.value.value_or("<none>") == text);
}

}  // namespace

TEST_SUITE("pgoutput_stream") {
  TEST_CASE("every change kind decodes from a real pgoutput stream (proto_version 1)") {
    PgCluster& pg = shared_cluster();
    const std::string db = unique_name("pgoutput");
    pg.create_database(db);
    PgConn admin = pg.admin(db);
    REQUIRE_OK(admin.exec("CREATE TABLE orders (id bigint PRIMARY KEY, note text, big text)"));
    REQUIRE_OK(admin.exec("ALTER TABLE orders ALTER big SET STORAGE EXTERNAL"));  // out of line, uncompressed
    REQUIRE_OK(admin.exec("CREATE TABLE audit (id int, v text)"));
    REQUIRE_OK(admin.exec("ALTER TABLE audit REPLICA IDENTITY FULL"));
    REQUIRE_OK(admin.exec("CREATE PUBLICATION pub FOR TABLE orders, audit"));

    ReplicationStream stream(pg, db);
    REQUIRE_OK(admin.exec("INSERT INTO orders VALUES (1, 'first', repeat('x', 5000)), (2, NULL, 'small')"));
    REQUIRE_OK(admin.exec("UPDATE orders SET note = 'second' WHERE id = 1"));  // big: unchanged TOAST
    REQUIRE_OK(admin.exec("UPDATE orders SET id = 20 WHERE id = 2"));          // key change: old key
    REQUIRE_OK(admin.exec("DELETE FROM orders WHERE id = 20"));
    REQUIRE_OK(admin.exec(
        "BEGIN; INSERT INTO audit VALUES (1, 'a'); UPDATE audit SET v = 'b'; DELETE FROM audit; COMMIT"));
    REQUIRE_OK(admin.exec("TRUNCATE orders, audit RESTART IDENTITY"));
    REQUIRE_OK(admin.exec("SELECT pg_logical_emit_message(false, 'shardwire', 'outside')"));
    REQUIRE_OK(admin.exec("SELECT pg_logical_emit_message(true, 'shardwire', 'inside')"));

    stream.start("proto_version '1', publication_names 'pub', messages 'true'");
    stream.read_until([](const auto& m) { return count_of<pgo::Commit>(m) == 7; });
    const auto& msgs = stream.messages;

    const auto begins = all_of<pgo::Begin>(msgs);
    const auto commits = all_of<pgo::Commit>(msgs);
    REQUIRE(begins.size() == 7);
    for (size_t i = 0; i < begins.size(); ++i) {
      CHECK(begins[i].final_lsn == commits[i].commit_lsn);
      CHECK(begins[i].commit_time == commits[i].commit_time);
      CHECK(commits[i].end_lsn > commits[i].commit_lsn);
      if (i > 0) CHECK(begins[i].xid > begins[i - 1].xid);
    }

    pgo::RelationCache relations;
    for (const auto& r : all_of<pgo::Relation>(msgs)) relations.put(r);
    REQUIRE(relations.size() == 2);
    const auto orders_oid = static_cast<uint32_t>(std::stoul(admin.value("SELECT 'orders'::regclass::oid")));
    const auto audit_oid = static_cast<uint32_t>(std::stoul(admin.value("SELECT 'audit'::regclass::oid")));
    auto orders = relations.find(orders_oid);
    REQUIRE(orders.is_ok());
    CHECK((*orders)->namespace_name == "public");
    CHECK((*orders)->name == "orders");
    CHECK((*orders)->replica_identity == 'd');
    REQUIRE((*orders)->columns.size() == 3);
    CHECK((*orders)->columns[0].key);
    CHECK((*orders)->columns[0].type_oid == 20);
    CHECK_FALSE((*orders)->columns[1].key);
    CHECK((*orders)->columns[2].name == "big");
    auto audit = relations.find(audit_oid);
    REQUIRE(audit.is_ok());
    CHECK((*audit)->replica_identity == 'f');
    CHECK((*audit)->columns.at(0).key);
    CHECK((*audit)->columns.at(1).key);

    const auto inserts = all_of<pgo::Insert>(msgs);
    REQUIRE(inserts.size() == 3);
    REQUIRE(relations.find_for_tuple(inserts[0].relation_oid, inserts[0].new_tuple).is_ok());
    check_text(inserts[0].new_tuple[0], "1");
    check_text(inserts[0].new_tuple[2], std::string(5000, 'x'));
    check_text(inserts[1].new_tuple[0], "2");
    CHECK(inserts[1].new_tuple[1].kind == pgo::ColumnKind::Null);
    CHECK(inserts[2].relation_oid == audit_oid);

    const auto updates = all_of<pgo::Update>(msgs);
    REQUIRE(updates.size() == 3);
    CHECK(updates[0].old_kind == pgo::OldTuple::None);
    check_text(updates[0].new_tuple.at(1), "second");
    CHECK(updates[0].new_tuple.at(2).kind == pgo::ColumnKind::UnchangedToast);
    CHECK(updates[1].old_kind == pgo::OldTuple::Key);
    check_text(updates[1].old_tuple.at(0), "2");
    CHECK(updates[1].old_tuple.at(2).kind == pgo::ColumnKind::Null);
    check_text(updates[1].new_tuple.at(0), "20");
    CHECK(updates[2].relation_oid == audit_oid);
    CHECK(updates[2].old_kind == pgo::OldTuple::Full);
    check_text(updates[2].old_tuple.at(1), "a");
    check_text(updates[2].new_tuple.at(1), "b");

    const auto deletes = all_of<pgo::Delete>(msgs);
    REQUIRE(deletes.size() == 2);
    CHECK(deletes[0].old_kind == pgo::OldTuple::Key);
    check_text(deletes[0].old_tuple.at(0), "20");
    CHECK(deletes[1].old_kind == pgo::OldTuple::Full);
    check_text(deletes[1].old_tuple.at(1), "b");

    const auto truncates = all_of<pgo::Truncate>(msgs);
    REQUIRE(truncates.size() == 1);
    CHECK(truncates[0].restart_identity);
    CHECK_FALSE(truncates[0].cascade);
    CHECK(truncates[0].relation_oids.size() == 2);

    const auto notes = all_of<pgo::DecodingMessage>(msgs);
    REQUIRE(notes.size() == 2);
    CHECK_FALSE(notes[0].transactional);
    CHECK(notes[0].prefix == "shardwire");
    CHECK(notes[0].content == "outside");
    CHECK(notes[1].transactional);
    CHECK(notes[1].content == "inside");

    // The status update moves the slot's confirmed position to what it reported.
    const pgo::Lsn end = commits.back().end_lsn;
    stream.confirm(end);
    std::string confirmed;
    for (int i = 0; i < 100 && confirmed != std::to_string(end); ++i) {
      sleep_ms(100);
      confirmed = admin.value(
          "SELECT (confirmed_flush_lsn - '0/0')::text FROM pg_replication_slots WHERE slot_name = "
          "'sw_it_slot'");
    }
    CHECK(confirmed == std::to_string(end));
  }

  TEST_CASE("a streamed large transaction decodes (proto_version 2, streaming on)") {
    PgCluster& pg = shared_cluster();
    const std::string db = unique_name("pgoutput_stream");
    pg.create_database(db);
    PgConn admin = pg.admin(db);
    REQUIRE_OK(admin.exec("CREATE TABLE orders (id bigint PRIMARY KEY, note text)"));
    REQUIRE_OK(admin.exec("CREATE PUBLICATION pub FOR TABLE orders"));

    ReplicationStream stream(pg, db, "-c logical_decoding_work_mem=64kB");
    REQUIRE_OK(admin.exec("INSERT INTO orders SELECT g, repeat('y', 200) FROM generate_series(1, 3000) g"));
    stream.start("proto_version '2', streaming 'on', publication_names 'pub'");
    stream.read_until([](const auto& m) { return count_of<pgo::StreamCommit>(m) == 1; });
    const auto& msgs = stream.messages;

    const auto starts = all_of<pgo::StreamStart>(msgs);
    REQUIRE_FALSE(starts.empty());
    CHECK(starts.front().first_segment);
    const uint32_t xid = starts.front().xid;
    for (size_t i = 1; i < starts.size(); ++i) {
      CHECK(starts[i].xid == xid);
      CHECK_FALSE(starts[i].first_segment);
    }
    CHECK(count_of<pgo::StreamStop>(msgs) == starts.size());
    CHECK(count_of<pgo::Begin>(msgs) == 0);
    const auto relations = all_of<pgo::Relation>(msgs);
    REQUIRE(relations.size() == 1);
    CHECK(relations[0].stream_xid == xid);
    const auto inserts = all_of<pgo::Insert>(msgs);
    REQUIRE(inserts.size() == 3000);
    for (const auto& ins : inserts) CHECK(ins.stream_xid == xid);
    check_text(inserts.back().new_tuple.at(0), "3000");
    const auto commit = all_of<pgo::StreamCommit>(msgs).at(0);
    CHECK(commit.xid == xid);
    CHECK(commit.end_lsn > commit.commit_lsn);
  }
}
