// The reshard scenario (reshard_test.cc) under faults, with the same history checker: while
// REBALANCE moves 819 buckets to the new shard, the instance that runs the mover is killed
// (SIGKILL) three times at random moments -- while copying, while catching up, at a cutover or
// after it -- the other instance is restarted (SIGTERM), one old shard's backends are terminated
// (pg_terminate_backend, walsenders included) and the catalog is cut off (a frozen TCP relay) for
// two seconds. Clients see errors; nothing may be lost.
//
// The faults' order and moments come from RESHARD_SEED (printed; default: random).
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <random>
#include <set>

#include "it_test.h"
#include "reshard_expect.h"

using namespace it;
using namespace it::reshard;

TEST_SUITE("reshard_faults") {
  TEST_CASE(
      "REBALANCE with the mover killed, an instance restarted, backends terminated, the catalog cut off") {
    PROXY_ONLY();
    const char* seed_env = std::getenv("RESHARD_SEED");
    const uint64_t seed =
        seed_env && *seed_env ? std::strtoull(seed_env, nullptr, 10) : std::random_device{}();
    MESSAGE("RESHARD_SEED=" << seed);
    std::mt19937_64 rng(seed);

    DeploymentOptions options;
    options.rows_per_bucket = env_int("RESHARD_ROWS_PER_BUCKET", 5);
    options.max_concurrent = {4, 0};  // instance 0 runs every migration; instance 1 only routes
    options.catalog_via_relay = true;
    // Each copy lasts about 5 s: the faults land inside the rebalance.
    options.copy_rows_per_sec = 40LL * options.rows_per_bucket;
    Deployment d(options);
    Workload w({env_int("RESHARD_CLIENTS", 8), kInstances, [&](int i) { return d.conninfo(i); }, seed,
                env_int("RESHARD_THINK_MS", 5)});
    MigrationWatch watch(d);

    PgConn admin = d.admin(1);
    // The plan is made on the seed rows alone (the same number in every bucket), so the moved
    // 20% of the buckets hold 20% of the rows; the clients start as soon as REBALANCE answers,
    // before the mover (which looks for new migrations every second) starts copying.
    PgResult started = admin.exec("REBALANCE");
    REQUIRE_MESSAGE(started.ok(), started.describe());
    w.start();
    const double from = w.elapsed_s();
    admin.reset();

    // Each fault waits until some migration has reached one of `states`, then a random moment.
    struct Fault {
      std::string what;
      std::set<std::string> states;
      std::function<void()> inject;
    };
    const std::set<std::string> copying = {"copying"};
    const std::set<std::string> streaming = {"catching_up", "cutting_over"};
    const std::set<std::string> flipping = {"cutting_over", "rollback_window", "cleaning"};
    auto kill_mover = [&] { d.kill_instance(0, std::chrono::milliseconds(300)); };
    std::vector<Fault> faults = {{"restart instance 1", copying, [&] { d.restart_instance(1); }},
                                 {"catalog unreachable for 2 s", copying, [&] {
                                    d.catalog_relay()->freeze(true);
                                    sleep_ms(2000);
                                    d.catalog_relay()->freeze(false);
                                  }}};
    const int victim = static_cast<int>(rng() % kOldShards);
    faults.push_back({"terminate the backends of s" + std::to_string(victim), copying, [&] {
                        MESSAGE("terminated " << d.terminate_backends(victim) << " backends on s" << victim);
                      }});
    std::shuffle(faults.begin(), faults.end(), rng);
    faults.insert(faults.begin() + static_cast<long>(rng() % 4),
                  {"SIGKILL the mover while copying", copying, kill_mover});
    faults.push_back({"SIGKILL the mover while catching up", streaming, kill_mover});
    faults.push_back({"SIGKILL the mover at a cutover or after", flipping, kill_mover});

    int injected = 0;
    for (const Fault& fault : faults) {
      const bool reached = wait_until(
          [&] {
            for (auto& [id, row] : watch.migrations())
              if (fault.states.count(row["state"])) return true;
            return false;
          },
          std::chrono::seconds(120), std::chrono::milliseconds(20));
      if (!reached) {
        MESSAGE(w.elapsed_s() << " s: skipped (no migration reached that state): " << fault.what);
        continue;
      }
      sleep_ms(static_cast<int>(rng() % (fault.states == flipping ? 150 : 1200)));
      MESSAGE(w.elapsed_s() << " s: " << fault.what << "; migrations:\n" << watch.summary());
      fault.inject();
      ++injected;
    }
    MESSAGE(injected << " of " << faults.size() << " faults injected during the rebalance");
    CHECK(injected >= 4);  // the copy-phase faults always find a migration copying

    expect_nothing_lost(d, w, watch, from, std::chrono::seconds(400));
  }

}  // TEST_SUITE

