#include "session/cancel_join.h"

#include <doctest/doctest.h>

#include <functional>
#include <vector>

using sw::session::CancelJoin;

TEST_CASE("CancelJoin: runs once, after the seal and the last delivery, in any order") {
  for (int cancels = 0; cancels <= 3; ++cancels) {
    for (bool delivered_before_seal : {false, true}) {
      CAPTURE(cancels);
      CAPTURE(delivered_before_seal);
      int runs = 0;
      CancelJoin join([&runs] { ++runs; });
      std::vector<std::function<void()>> deliveries;
      for (int i = 0; i < cancels; ++i) deliveries.push_back(join.add());
      if (delivered_before_seal) {
        for (auto& delivered : deliveries) delivered();
        CHECK(runs == 0);  // more cancels may still be sent
        join.seal();
        CHECK(runs == 1);
      } else {
        join.seal();
        for (auto& delivered : deliveries) {
          CHECK(runs == 0);  // a cancel is still on its way
          delivered();
        }
        CHECK(runs == 1);
      }
      join.seal();  // sealing again changes nothing
      CHECK(runs == 1);
    }
  }
}

TEST_CASE("CancelJoin: a join that goes unsealed seals itself; no callback is fine") {
  int runs = 0;
  std::function<void()> late;
  {
    CancelJoin join([&runs] { ++runs; });
    late = join.add();
  }
  CHECK(runs == 0);
  late();
  CHECK(runs == 1);
  CancelJoin nobody{std::function<void()>()};
  auto delivered = nobody.add();
  nobody.seal();
  delivered();  // nothing to run, nothing breaks
}
