#include "session/response_tracker.h"

#include <doctest/doctest.h>

using sw::session::Expectation;
using sw::session::FailedParse;
using sw::session::Owed;
using sw::session::ResponseTracker;
using Verdict = ResponseTracker::Verdict;

namespace {

Expectation owed(Owed kind, bool relay = true, uint64_t statement = 0) {
  Expectation e;
  e.owed = kind;
  e.relay = relay;
  e.statement = statement;
  return e;
}

Expectation synthetic() {
  Expectation e;
  e.owed = Owed::Synthetic;
  return e;
}

// Feeds server message types; returns the verdict letters ('R'elay, 'S'wallow, 'X' desync).
std::string feed(ResponseTracker& tracker, const std::string& types, std::string* emitted = nullptr) {
  std::string verdicts, emit;
  for (char type : types) {
    auto outcome = tracker.on_server_message(type, &emit);
    verdicts.push_back(outcome.verdict == Verdict::Relay     ? 'R'
                       : outcome.verdict == Verdict::Swallow ? 'S'
                                                             : 'X');
  }
  if (emitted) *emitted = emit;
  return verdicts;
}

// What libpq sends for a COPY in the extended protocol before its CopyInResponse comes.
void expect_copy_batch(ResponseTracker& tracker) {
  std::string now;
  for (Owed kind : {Owed::Parse, Owed::Bind, Owed::DescribePortal, Owed::Execute, Owed::Sync})
    tracker.expect(owed(kind), &now);
}

}  // namespace

TEST_CASE("a simple query is owed everything up to ReadyForQuery") {
  ResponseTracker tracker;
  std::string now;
  tracker.expect(owed(Owed::Query), &now);
  CHECK(tracker.owed_ready_for_query() == 1);
  CHECK(feed(tracker, "TDDCZ") == "RRRRR");
  CHECK(tracker.idle());
  CHECK(tracker.owed_ready_for_query() == 0);
}

TEST_CASE("an error inside a simple query still waits for ReadyForQuery") {
  ResponseTracker tracker;
  std::string now;
  tracker.expect(owed(Owed::Query), &now);
  CHECK(feed(tracker, "E") == "R");
  CHECK_FALSE(tracker.idle());
  CHECK(feed(tracker, "Z") == "R");
  CHECK(tracker.idle());
}

TEST_CASE("extended pipeline completes message by message") {
  ResponseTracker tracker;
  std::string now;
  for (Owed kind : {Owed::Parse, Owed::Bind, Owed::DescribePortal, Owed::Execute, Owed::Sync})
    tracker.expect(owed(kind), &now);
  CHECK(feed(tracker, "12TDDC") == "RRRRRR");
  CHECK_FALSE(tracker.idle());
  CHECK(feed(tracker, "Z") == "R");
  CHECK(tracker.idle());
}

TEST_CASE("an error in a pipeline skips the owed answers up to Sync, like the server") {
  ResponseTracker tracker;
  std::string now;
  tracker.expect(owed(Owed::Parse, true, 7), &now);
  tracker.expect(owed(Owed::Bind), &now);
  tracker.expect(synthetic(), "X", &now);
  Expectation answered = synthetic();  // the proxy's ParseComplete for the client's "s2"
  answered.parse_complete = true;
  answered.statement = 8;
  tracker.expect(std::move(answered), "s2", &now);
  tracker.expect(owed(Owed::Parse, true, 9), "s3", &now);
  tracker.expect(owed(Owed::Execute), &now);
  tracker.expect(owed(Owed::Sync), &now);
  tracker.expect(owed(Owed::Parse), &now);
  tracker.expect(owed(Owed::Sync), &now);
  std::string emitted;
  CHECK(feed(tracker, "E", &emitted) == "R");
  CHECK(emitted.empty());  // the synthetic answers belonged to skipped messages
  // The failed Parse, then the skipped ones: what each was to define.
  const std::vector<FailedParse>& failed = tracker.failed_parses();
  REQUIRE(failed.size() == 3);
  CHECK((failed[0].statement == 7 && failed[0].on_server && failed[0].client_name.empty()));
  CHECK((failed[1].statement == 8 && !failed[1].on_server && failed[1].client_name == "s2"));
  CHECK((failed[2].statement == 9 && failed[2].on_server && failed[2].client_name == "s3"));
  tracker.clear_failed_parses();
  CHECK(feed(tracker, "Z1Z") == "RRR");
  CHECK(tracker.idle());
}

// The server's error can arrive before the client's Sync was read (a pipeline on a loaded
// machine): the messages forwarded after it up to that Sync are skipped by the server too, so
// their ReadyForQuery is the next answer (it was a desync: 08P01 "unexpected message 'Z'").
TEST_CASE("an error before its batch's Sync was forwarded: what follows up to the Sync owes nothing") {
  ResponseTracker tracker;
  std::string now;
  tracker.expect(owed(Owed::Parse), &now);
  tracker.expect(owed(Owed::Bind), &now);
  tracker.expect(owed(Owed::Execute), &now);
  CHECK(feed(tracker, "12E") == "RRR");
  CHECK(tracker.idle());
  tracker.expect(owed(Owed::Parse, true, 7), &now);
  tracker.expect(owed(Owed::Bind), &now);
  tracker.expect(synthetic(), "2", &now);
  tracker.expect(owed(Owed::Execute), &now);
  CHECK(now.empty());
  REQUIRE(tracker.failed_parses().size() == 1);
  CHECK(tracker.failed_parses().front().statement == 7);
  tracker.expect(owed(Owed::Sync), &now);
  CHECK(feed(tracker, "Z") == "R");
  CHECK(tracker.idle());
  // The next batch is answered as usual.
  tracker.expect(owed(Owed::Parse), &now);
  tracker.expect(owed(Owed::Sync), &now);
  CHECK(feed(tracker, "1Z") == "RR");
  CHECK(tracker.idle());
}

TEST_CASE("synthetic answers go out in their place") {
  ResponseTracker tracker;
  std::string now;
  tracker.expect(synthetic(), "first", &now);
  CHECK(now == "first");  // nothing owed before it
  now.clear();
  tracker.expect(owed(Owed::Bind), &now);
  tracker.expect(synthetic(), "second", &now);
  tracker.expect(owed(Owed::Sync), &now);
  CHECK(now.empty());
  std::string emitted;
  CHECK(feed(tracker, "2", &emitted) == "R");
  CHECK(emitted == "second");
  CHECK(feed(tracker, "Z") == "R");
}

TEST_CASE("a Parse the proxy answers goes out as a ParseComplete, its text being the client's name") {
  ResponseTracker tracker;
  std::string now;
  tracker.expect(owed(Owed::Bind), &now);
  Expectation answered = synthetic();
  answered.parse_complete = true;
  tracker.expect(std::move(answered), "s1", &now);
  tracker.expect(owed(Owed::Sync), &now);
  std::string emitted;
  CHECK(feed(tracker, "2", &emitted) == "R");
  CHECK(emitted == std::string("1\0\0\0\4", 5));  // not the name
  CHECK(feed(tracker, "Z") == "R");
  CHECK(tracker.failed_parses().empty());
}

TEST_CASE("answers to injected messages are swallowed, their errors relayed when asked") {
  ResponseTracker tracker;
  std::string now;
  Expectation replay = owed(Owed::Query, false);
  replay.relay_errors = false;
  tracker.expect(std::move(replay), &now);
  Expectation parse = owed(Owed::Parse, false, 3);
  tracker.expect(std::move(parse), &now);
  tracker.expect(owed(Owed::Bind), &now);
  tracker.expect(owed(Owed::Sync), &now);
  CHECK(feed(tracker, "SCCZ") == "SSSS");
  CHECK(feed(tracker, "E") == "R");  // the injected Parse failed: the client must hear it
  CHECK(feed(tracker, "Z") == "R");
  CHECK(tracker.idle());
}

TEST_CASE("asynchronous messages never consume what is owed") {
  ResponseTracker tracker;
  std::string now;
  tracker.expect(owed(Owed::Sync), &now);
  CHECK(feed(tracker, "NAS") == "RRR");
  CHECK_FALSE(tracker.idle());
  CHECK(feed(tracker, "Z") == "R");
  CHECK(feed(tracker, "N") == "R");  // nothing owed, still fine
}

TEST_CASE("COPY sub-protocol inside a query and inside Execute") {
  ResponseTracker tracker;
  std::string now;
  tracker.expect(owed(Owed::Query), &now);
  CHECK(feed(tracker, "H") == "R");
  CHECK(tracker.in_copy());
  CHECK(feed(tracker, "ddcC") == "RRRR");
  CHECK_FALSE(tracker.in_copy());
  CHECK(feed(tracker, "Z") == "R");
  tracker.expect(owed(Owed::Execute), &now);
  tracker.expect(owed(Owed::Sync), &now);  // ignored by the server once it copies in
  CHECK(feed(tracker, "G") == "R");
  CHECK(tracker.in_copy());
  tracker.on_client_copy_end();
  tracker.expect(owed(Owed::Sync), &now);
  CHECK(feed(tracker, "CZ") == "RR");
  CHECK(tracker.idle());
}

// libpq and pgjdbc send Parse, Bind, Describe, Execute, Sync, then, once copying in, CopyData,
// CopyDone (or CopyFail) and another Sync. The server ignores the Sync it reads while it copies
// in, so both Syncs get one ReadyForQuery (it was a desync: the next request met a Sync owed).
TEST_CASE("an Execute's COPY FROM STDIN: the Sync sent while it copies in is owed nothing") {
  ResponseTracker tracker;
  std::string now;
  expect_copy_batch(tracker);
  CHECK(feed(tracker, "12nG") == "RRRR");
  CHECK(tracker.owed_ready_for_query() == 0);
  tracker.expect(owed(Owed::Sync), &now);  // one sent while copying in: ignored too
  tracker.on_client_copy_end();
  CHECK(feed(tracker, "C") == "R");
  CHECK_FALSE(tracker.idle());  // the batch waits for the Sync after the copy
  tracker.expect(owed(Owed::Sync), &now);
  CHECK(tracker.owed_ready_for_query() == 1);
  CHECK(feed(tracker, "Z") == "R");
  CHECK(tracker.idle());
  CHECK(tracker.owed_ready_for_query() == 0);
  tracker.expect(owed(Owed::Query), &now);  // the next request is answered as usual
  CHECK(feed(tracker, "TDCZ") == "RRRR");
  CHECK(tracker.idle());
}

TEST_CASE("an Execute's COPY FROM STDIN failed by the client's CopyFail: one ReadyForQuery") {
  ResponseTracker tracker;
  std::string now;
  expect_copy_batch(tracker);
  CHECK(feed(tracker, "12nG") == "RRRR");
  tracker.on_client_copy_end();
  tracker.expect(owed(Owed::Sync), &now);
  CHECK(feed(tracker, "E") == "R");
  CHECK_FALSE(tracker.idle());
  CHECK(feed(tracker, "Z") == "R");
  CHECK(tracker.idle());
  CHECK(tracker.owed_ready_for_query() == 0);
}

TEST_CASE("an Execute's COPY FROM STDIN failed by the server while copying in, then the client's end") {
  ResponseTracker tracker;
  std::string now;
  expect_copy_batch(tracker);
  CHECK(feed(tracker, "12nGE") == "RRRRR");  // bad data: the copy is over on the server
  CHECK_FALSE(tracker.idle());
  tracker.on_client_copy_end();  // ignored by the server
  tracker.expect(owed(Owed::Sync), &now);
  CHECK(feed(tracker, "Z") == "R");
  CHECK(tracker.idle());
  CHECK(tracker.owed_ready_for_query() == 0);
}

TEST_CASE("a pipelined Execute's COPY FROM STDIN: its end and Sync forwarded before its CopyInResponse") {
  ResponseTracker tracker;
  std::string now;
  expect_copy_batch(tracker);
  tracker.on_client_copy_end();
  tracker.expect(owed(Owed::Sync), &now);
  tracker.expect(owed(Owed::Parse), &now);  // the next batch, pipelined too
  tracker.expect(owed(Owed::Sync), &now);
  CHECK(tracker.owed_ready_for_query() == 3);
  CHECK(feed(tracker, "12nGCZ") == "RRRRRR");
  CHECK(tracker.owed_ready_for_query() == 1);
  CHECK(feed(tracker, "1Z") == "RR");
  CHECK(tracker.idle());
  CHECK(tracker.owed_ready_for_query() == 0);
}

TEST_CASE("a CopyDone forwarded with no copy begun leaves what is owed as it was") {
  ResponseTracker tracker;
  std::string now;
  for (Owed kind : {Owed::Parse, Owed::Bind, Owed::Execute, Owed::Sync}) tracker.expect(owed(kind), &now);
  tracker.on_client_copy_end();  // not a COPY: the server ignores the CopyDone
  tracker.expect(owed(Owed::Sync), &now);
  CHECK(feed(tracker, "12CZ") == "RRRR");
  CHECK_FALSE(tracker.idle());
  CHECK(feed(tracker, "Z") == "R");
  CHECK(tracker.idle());
}

TEST_CASE("a Query's COPY FROM STDIN ends at its ReadyForQuery, its end forwarded before or after") {
  ResponseTracker tracker;
  std::string now;
  tracker.expect(owed(Owed::Query), &now);
  CHECK(feed(tracker, "G") == "R");
  tracker.on_client_copy_end();
  CHECK(feed(tracker, "CZ") == "RR");
  CHECK(tracker.idle());
  tracker.expect(owed(Owed::Query), &now);
  tracker.on_client_copy_end();  // pipelined: before the CopyInResponse
  CHECK(feed(tracker, "GCZ") == "RRR");
  CHECK(tracker.idle());
  CHECK(tracker.owed_ready_for_query() == 0);
  tracker.expect(owed(Owed::Parse), &now);
  tracker.expect(owed(Owed::Sync), &now);
  CHECK(feed(tracker, "1Z") == "RR");
  CHECK(tracker.idle());
}

TEST_CASE("a message nobody asked for is a desync") {
  ResponseTracker tracker;
  CHECK(feed(tracker, "D") == "X");
  std::string now;
  tracker.expect(owed(Owed::Parse), &now);
  CHECK(feed(tracker, "2") == "X");
  tracker.reset();
  tracker.expect(owed(Owed::Bind), &now);
  CHECK(feed(tracker, "Z") == "X");
}

TEST_CASE("an error at the implicit commit of Sync is relayed and ReadyForQuery still follows") {
  ResponseTracker tracker;
  std::string now;
  tracker.expect(owed(Owed::Execute), &now);
  tracker.expect(owed(Owed::Sync), &now);
  CHECK(feed(tracker, "CEZ") == "RRR");
  CHECK(tracker.idle());
}

TEST_CASE("expectation queue: first in first out across the ring's wrap and while it grows wrapped") {
  sw::session::ExpectationQueue queue;
  uint64_t pushed = 0;
  uint64_t popped = 0;
  // Up to 5 queued at a time, 41 rounds of 3 through a ring of 8 slots: the head wraps many
  // times and stops at slot 3 (123 popped).
  for (int round = 0; round < 41; ++round) {
    while (pushed - popped < 5) {
      ++pushed;
      queue.push_back(owed(Owed::Parse, true, pushed), std::to_string(pushed));
    }
    while (pushed - popped > 2) {
      REQUIRE_FALSE(queue.empty());
      CHECK(queue.front().statement == ++popped);
      CHECK(queue.front_text() == std::to_string(popped));
      queue.pop_front();
    }
  }
  CHECK(popped == 123);
  // 20 more with the head mid-ring: the ring doubles twice, its wrapped run (and the texts beside
  // it) kept in order.
  for (int i = 0; i < 20; ++i) {
    ++pushed;
    queue.push_back(owed(Owed::Parse, true, pushed), std::to_string(pushed));
  }
  while (!queue.empty()) {
    CHECK(queue.front().statement == ++popped);
    CHECK(queue.front_text() == std::to_string(popped));
    queue.pop_front();
  }
  CHECK(popped == pushed);
  queue.push_back(synthetic(), "x");
  queue.clear();
  CHECK(queue.empty());
}

TEST_CASE("expectation queue: erasing in the middle of a wrapped ring keeps the order and the texts") {
  sw::session::ExpectationQueue queue;
  for (uint64_t i = 1; i <= 8; ++i) queue.push_back(owed(Owed::Parse, true, i), std::to_string(i));
  for (int i = 0; i < 6; ++i) queue.pop_front();
  for (uint64_t i = 9; i <= 13; ++i) queue.push_back(owed(Owed::Parse, true, i), std::to_string(i));
  REQUIRE(queue.size() == 7);  // 7 8 | 9 10 11 12 13, across the ring's end
  queue.erase(1);              // 8
  queue.erase(4);              // 12
  queue.erase(4);              // 13, the last
  queue.push_back(owed(Owed::Sync), "");
  std::vector<uint64_t> order;
  std::vector<std::string> texts;
  while (!queue.empty()) {
    order.push_back(queue.front().statement);
    texts.push_back(queue.front_text());
    queue.pop_front();
  }
  CHECK(order == std::vector<uint64_t>{7, 9, 10, 11, 0});
  CHECK(texts == std::vector<std::string>{"7", "9", "10", "11", ""});
}
