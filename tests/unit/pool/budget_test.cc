#include "pool/budget.h"

#include <doctest/doctest.h>

#include <thread>
#include <vector>

using sw::pool::Budget;
using sw::pool::BudgetRegistry;

TEST_CASE("the budget caps open servers across members") {
  Budget budget(3);
  CHECK(budget.try_take());
  CHECK(budget.try_take());
  CHECK(budget.try_take());
  CHECK_FALSE(budget.try_take());
  budget.give_back();
  CHECK(budget.open() == 2);
  CHECK(budget.try_take());
  budget.set_size(5);
  CHECK(budget.try_take());
  CHECK(budget.open() == 4);
}

TEST_CASE("capacity freed is announced to waiting members only; shedding asks the others") {
  Budget budget(1);
  int freed_a = 0, freed_b = 0, shed_a = 0, shed_b = 0;
  auto run_now = [](std::function<void()> task) { task(); };
  int a_id = 0, b_id = 0;
  budget.join({&a_id, run_now, [&] { ++shed_a; }, [&] { ++freed_a; }});
  budget.join({&b_id, run_now, [&] { ++shed_b; }, [&] { ++freed_b; }});
  REQUIRE(budget.try_take());
  budget.set_waiting(&b_id, true);
  budget.ask_others_to_shed(&b_id);
  CHECK(shed_a == 1);
  CHECK(shed_b == 0);
  budget.give_back();
  CHECK(freed_a == 0);
  CHECK(freed_b == 1);
  budget.leave(&b_id);
  REQUIRE(budget.try_take());
  budget.give_back();
  CHECK(freed_b == 1);
}

TEST_CASE("concurrent takers never exceed the cap") {
  Budget budget(7);
  std::atomic<int> taken{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i)
        if (budget.try_take()) ++taken;
    });
  for (auto& t : threads) t.join();
  CHECK(taken.load() == 7);
}

TEST_CASE("the registry shares one budget per key") {
  BudgetRegistry registry;
  auto a = registry.get("s0|app", 4);
  auto b = registry.get("s0|app", 4);
  auto c = registry.get("s1|app", 4);
  CHECK(a == b);
  CHECK(a != c);
}
