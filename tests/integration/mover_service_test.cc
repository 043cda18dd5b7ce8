// The mover service's catalog session (docs/architecture.md §8.1): an idle mover polls the
// catalog every second over one session kept open (no login per poll), and a session the catalog
// ends (pg_terminate_backend) is replaced at the next poll, which goes on finding migrations.
// Sessions are observed on the catalog's server: pg_stat_activity (application_name
// "shardwire mover") and pg_stat_database.sessions (every login to the catalog database).
#include <set>
#include <string>
#include <utility>

#include "harness/mover_helpers.h"
#include "harness/sharded_fixture.h"
#include "it_test.h"

using namespace it;

namespace {

// (pid, backend_start) of each session of the mover's poll on the catalog database.
using Session = std::pair<std::string, std::string>;

std::set<Session> mover_sessions(PgConn& server, const std::string& catalog_db) {
  PgResult r = server.exec(
      "SELECT pid::text, backend_start::text FROM pg_stat_activity WHERE application_name = 'shardwire "
      "mover' "
      "AND datname = '" +
      catalog_db + "'");
  std::set<Session> out;
  for (int i = 0; i < r.rows(); ++i) out.emplace(r.value(i, 0), r.value(i, 1));
  return out;
}

long long catalog_logins(PgConn& server, const std::string& catalog_db) {
  return std::stoll(
      server.value("SELECT sessions FROM pg_stat_database WHERE datname = '" + catalog_db + "'"));
}

}  // namespace

TEST_SUITE("mover_service") {
  TEST_CASE("an idle mover polls over one catalog session: no login per poll") {
    PROXY_ONLY();
    ShardedFixture f(mover_options());
    INFO("proxy log:\n" << mover_log(f));
    const std::string catalog_db = f.setup.catalog().value("SELECT current_database()");
    PgConn server = f.setup.cluster().admin("postgres");
    // Logins made before this point (the proxy's start) reach pg_stat_database within a second.
    sleep_ms(1500);
    const long long logins_before = catalog_logins(server, catalog_db);

    // About 5 polls (one a second), sampled every 100 ms.
    std::set<Session> seen;
    int samples = 0, samples_with_one = 0;
    for (; samples < 50; ++samples) {
      std::set<Session> now = mover_sessions(server, catalog_db);
      if (now.size() == 1) ++samples_with_one;
      seen.insert(now.begin(), now.end());
      sleep_ms(100);
    }
    sleep_ms(1500);  // a login's count reaches pg_stat_database when its backend is idle or ends
    const long long logins = catalog_logins(server, catalog_db) - logins_before;
    MESSAGE("about 5 s of an idle mover: " << logins << " logins to the catalog database, " << seen.size()
                                           << " mover session(s) seen in " << samples << " samples");
    // A login per poll would make about 5 here (the proxy's other catalog sessions stay open).
    CHECK_MESSAGE(logins <= 1, logins << " logins to the catalog in about 5 s of polls");
    CHECK_MESSAGE(seen.size() == 1, seen.size() << " different mover sessions in about 5 s of polls");
    CHECK_MESSAGE(samples_with_one == samples, "the mover's catalog session was open in only "
                                                   << samples_with_one << " of " << samples << " samples");
  }

  TEST_CASE("a mover whose catalog session is terminated connects again and goes on running migrations") {
    PROXY_ONLY();
    ShardedFixture f(mover_options("1s"));
    INFO("proxy log:\n" << mover_log(f));
    const std::string catalog_db = f.setup.catalog().value("SELECT current_database()");
    PgConn server = f.setup.cluster().admin("postgres");
    std::set<Session> first;
    REQUIRE_MESSAGE(wait_until(
                        [&] {
                          first = mover_sessions(server, catalog_db);
                          return first.size() == 1;
                        },
                        20s),
                    "no single mover session on the catalog; sessions: " << first.size());
    const std::string old_pid = first.begin()->first;

    REQUIRE(server.value("SELECT pg_terminate_backend(" + old_pid + ")") == "t");
    const bool gone = wait_until(
        [&] { return server.value("SELECT count(*) FROM pg_stat_activity WHERE pid = " + old_pid) == "0"; },
        20s);
    REQUIRE_MESSAGE(gone, "the terminated mover session (pid " << old_pid << ") is still there");
    std::set<Session> second;
    const bool replaced = wait_until(
        [&] {
          second = mover_sessions(server, catalog_db);
          return second.size() == 1 && second.begin()->first != old_pid;
        },
        20s);
    REQUIRE_MESSAGE(
        replaced, "the mover did not open a new catalog session after pid " << old_pid << " was terminated");
    MESSAGE("mover catalog session pid " << old_pid << " terminated; pid " << second.begin()->first
                                         << " replaced it");

    // The new session's polls find a new migration and run it to the end.
    Moving m = moving_on_s0(1);
    PgConn s0 = f.setup.shard(0);
    seed_orders(s0, m.keys[0], 20);
    PgConn admin = admin_console(f);
    const std::string id = start_move(admin, m.buckets);
    std::string last;
    REQUIRE_MESSAGE(
        wait_for_state(admin, id, "done", 60s, &last),
        "migration " << id << " did not reach 'done' after the mover reconnected; last: " << last);
    CHECK(bucket_rows(f, 1, m.buckets).size() == 20);
    CHECK(mover_sessions(server, catalog_db) == second);  // polls go on over the one new session
  }
}  // TEST_SUITE
