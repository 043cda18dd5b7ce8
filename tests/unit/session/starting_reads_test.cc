#include "session/starting_reads.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using sw::Status;
using sw::session::StartingReads;
using sw::session::StartWatch;

namespace {
StartingReads::Expire never_expired() {
  return [](const Status&) { FAIL("a read was expired"); };
}
}  // namespace

TEST_CASE("starting reads: with no older read waiting the acknowledgement runs at once") {
  StartingReads reads;
  int acknowledged = 0;
  reads.after_older(7, [&] { ++acknowledged; });
  CHECK(acknowledged == 1);
  // A read routed with the new version itself does not hold that version's acknowledgement.
  StartWatch watch;
  watch.begin(reads, 7, never_expired());
  reads.after_older(7, [&] { ++acknowledged; });
  CHECK(acknowledged == 2);
}

TEST_CASE("starting reads: a version is acknowledged once every read routed before it started") {
  StartingReads reads;
  StartWatch first;
  StartWatch second;
  StartWatch newer;
  first.begin(reads, 4, never_expired());
  second.begin(reads, 5, never_expired());
  int acknowledged = 0;
  reads.after_older(6, [&] { ++acknowledged; });
  newer.begin(reads, 6, never_expired());  // routed with the new version: it does not count
  CHECK(acknowledged == 0);
  first.end();
  CHECK(acknowledged == 0);
  first.end();  // idempotent
  CHECK(acknowledged == 0);
  second.end();
  CHECK(acknowledged == 1);
  CHECK(reads.waiting() == 1);
  newer.end();
  CHECK(reads.waiting() == 0);
  CHECK(acknowledged == 1);
}

TEST_CASE("starting reads: two versions waiting are released in their own time") {
  StartingReads reads;
  StartWatch old_read;
  StartWatch middle_read;
  old_read.begin(reads, 1, never_expired());
  std::vector<int> acknowledged;
  reads.after_older(2, [&] { acknowledged.push_back(2); });
  middle_read.begin(reads, 2, never_expired());
  reads.after_older(3, [&] { acknowledged.push_back(3); });
  old_read.end();
  CHECK(acknowledged == std::vector<int>{2});
  middle_read.end();
  CHECK(acknowledged == std::vector<int>{2, 3});
}

TEST_CASE("starting reads: expiring fails only the reads routed with an older version") {
  StartingReads reads;
  StartWatch old_read;
  StartWatch new_read;
  std::vector<std::string> failed;
  old_read.begin(reads, 3, [&](const Status& why) {
    failed.push_back(why.sqlstate);
    old_read.end();  // the runner fails, which ends its registration
  });
  new_read.begin(reads, 4, [&](const Status&) { failed.push_back("new"); });
  int acknowledged = 0;
  reads.after_older(4, [&] { ++acknowledged; });
  reads.expire_older(4, Status::proxy("40001", "cutover began"));
  CHECK(failed == std::vector<std::string>{"40001"});
  CHECK(acknowledged == 1);
  CHECK(reads.waiting() == 1);
}

TEST_CASE("starting reads: a runner destroyed while waiting releases the acknowledgement") {
  StartingReads reads;
  int acknowledged = 0;
  {
    StartWatch watch;
    watch.begin(reads, 1, never_expired());
    reads.after_older(2, [&] { ++acknowledged; });
    CHECK(acknowledged == 0);
  }
  CHECK(acknowledged == 1);
  CHECK(reads.waiting() == 0);
}
