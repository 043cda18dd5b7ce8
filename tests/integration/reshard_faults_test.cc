// The reshard scenario (reshard_test.cc) under faults, with the same history checker: while
// REBALANCE moves a fifth of the buckets to the new shard, the instance that runs the mover is killed
// (SIGKILL) three times at random moments -- while copying, while catching up, at a cutover or
// after it -- the other instance is restarted (SIGTERM), one old shard's backends are terminated
// (pg_terminate_backend, walsenders included) and the catalog is cut off (a frozen TCP relay) for
// two seconds. Clients see errors; nothing may be lost.
//
// Every fault must fire and prove it did (a fault whose phase never comes fails the test).
// The faults' order and moments come from RESHARD_SEED (printed; default: random).
#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

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
    // Each copy lasts about 10 s, so the four faults that need a copy in progress (about 5 s of
    // injecting, plus their random delays) land inside it.
    options.copy_rows_per_sec = 20LL * options.rows_per_bucket;
    Deployment d(options);
    Workload w({env_int("RESHARD_CLIENTS", 8), kInstances, [&](int i) { return d.conninfo(i); }, seed,
                env_int("RESHARD_THINK_MS", 5)});
    MigrationWatch watch(d);

    PgConn admin = d.admin(1);
    // The plan is made on the seed rows alone (the same number in every bucket), so the moved
    // 20% of the buckets hold 20% of the rows; the clients start as soon as REBALANCE answers,
    // before the mover (which looks for new migrations every second) starts copying.
    const PlanFigures plan = expect_plan(d, admin.exec("REBALANCE"));
    w.start();
    const double from = w.elapsed_s();
    admin.reset();

    // Each fault waits until some migration has reached one of `states` (read from the catalog
    // every 10 ms), then a random moment, and proves it fired: a fault that finds no migration in
    // its phase, or that cannot show its effect, fails the test instead of being skipped.
    struct Fault {
      std::string what;
      std::set<std::string> states;
      std::function<std::string()> inject;  // "" when it fired as promised, else what went wrong
    };
    const std::set<std::string> copying = {"copying"};
    const std::set<std::string> streaming = {"catching_up", "cutting_over"};
    const std::set<std::string> flipping = {"cutting_over", "rollback_window", "cleaning"};
    PgConn catalog = d.setup().catalog();
    // Migrations (id:state) in one of `states` now, per the catalog; "" when none.
    auto in_states = [&](const std::set<std::string>& states) {
      PgResult r = catalog.exec("SELECT id, state FROM shardwire.migrations ORDER BY id");
      std::string out;
      for (int i = 0; r.ok() && i < r.rows(); ++i)
        if (states.count(r.value(i, 1)))
          out += (out.empty() ? "" : " ") + r.value(i, 0) + ":" + r.value(i, 1);
      return out;
    };
    // SIGKILL of the instance running every migration; while it is down (the other runs none)
    // the catalog shows which migrations it was killed in.
    auto kill_mover = [&](const std::set<std::string>& states) {
      return [&, states]() -> std::string {
        const pid_t before = d.instance(0).pid();
        d.instance(0).signal(SIGKILL);
        auto exited = d.instance(0).wait_exit(std::chrono::seconds(10));
        const std::string frozen = in_states(states);
        sleep_ms(300);
        d.instance(0).restart();
        MESSAGE("killed instance 0 (pid " << before << ") with migrations " << frozen);
        if (!exited) return "instance 0 did not exit after SIGKILL";
        if (frozen.empty()) return "no migration was in that phase when the mover died";
        return "";
      };
    };
    const std::string relay_probe = "host=127.0.0.1 port=" + std::to_string(d.catalog_relay()->port()) +
                                    " dbname=" + d.setup().catalog_db() +
                                    " user=app password=secret sslmode=disable";
    std::vector<Fault> faults = {{"restart instance 1", copying,
                                  [&]() -> std::string {
                                    const pid_t before = d.instance(1).pid();
                                    d.restart_instance(1);
                                    return d.instance(1).pid() != before ? "" : "instance 1 kept its pid";
                                  }},
                                 {"catalog unreachable for 2 s", copying, [&]() -> std::string {
                                    d.catalog_relay()->freeze(true);
                                    const bool cut_off = !connect(relay_probe, 500ms).ok;
                                    sleep_ms(1500);
                                    d.catalog_relay()->freeze(false);
                                    const bool back = connect(relay_probe, 5s).ok;
                                    return cut_off && back ? ""
                                                           : "the relay did not cut the catalog off and back";
                                  }}};
    const int victim = static_cast<int>(rng() % static_cast<uint64_t>(d.old_shards()));
    faults.push_back({"terminate the backends of s" + std::to_string(victim), copying, [&]() -> std::string {
                        const int n = d.terminate_backends(victim);
                        MESSAGE("terminated " << n << " backends on s" << victim);
                        return n > 0 ? "" : "no backend to terminate";
                      }});
    std::shuffle(faults.begin(), faults.end(), rng);
    faults.insert(faults.begin() + static_cast<long>(rng() % 4),
                  {"SIGKILL the mover while copying", copying, kill_mover(copying)});
    faults.push_back({"SIGKILL the mover while catching up", streaming, kill_mover(streaming)});
    faults.push_back({"SIGKILL the mover at a cutover or after", flipping, kill_mover(flipping)});

    size_t injected = 0;
    for (const Fault& fault : faults) {
      const bool reached = wait_until([&] { return !in_states(fault.states).empty(); },
                                      std::chrono::seconds(120), std::chrono::milliseconds(10));
      CHECK_MESSAGE(reached, w.elapsed_s() << " s: no migration reached the phase of: " << fault.what
                                           << "\nmigrations:\n"
                                           << watch.summary());
      if (!reached) continue;
      sleep_ms(static_cast<int>(rng() % (fault.states == copying ? 600 : 30)));
      MESSAGE(w.elapsed_s() << " s: " << fault.what << "; migrations:\n" << watch.summary());
      const std::string failed = fault.inject();
      CHECK_MESSAGE(failed.empty(), fault.what << ": " << failed);
      injected += failed.empty();
    }
    MESSAGE(injected << " of " << faults.size() << " faults injected and proven during the rebalance");
    CHECK(injected == faults.size());

    expect_nothing_lost(d, w, watch, from, std::chrono::seconds(400), plan.buckets);
  }

}  // TEST_SUITE
