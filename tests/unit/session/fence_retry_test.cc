// What happens when SW001 arrives, driven by tables of server message sequences.
#include "session/fence_retry.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using sw::session::FenceRetry;

namespace {

// Passes each server message (one byte: its type) through to_client; returns what the client
// got after each message, '|' between them. '!' stands for the client's Flush being forwarded.
std::string pass(FenceRetry& fence, const std::string& types) {
  std::string seen;
  auto write = [&](std::string_view bytes) { seen.append(bytes); };
  for (size_t i = 0; i < types.size(); ++i) {
    if (i > 0) seen += '|';
    if (types[i] == '!')
      fence.on_flush(write);
    else
      fence.to_client(std::string_view(&types[i], 1), write);
  }
  return seen;
}

}  // namespace

TEST_CASE("fence retry: the first request's preamble is held until its answer starts") {
  struct Case {
    bool capture;
    const char* server;  // message types, in order
    const char* client;  // what the client got after each
  };
  const std::vector<Case> cases = {
      {true, "12TDCZ", "|||12TD|C|Z"},  // held until the first DataRow
      {true, "12nCZ", "|||12nC|Z"},
      {true, "1tTZ", "|||1tTZ"},     // a Describe-only batch: released by ReadyForQuery
      {true, "1N2EZ", "|1N||2E|Z"},  // a notice goes through but does not start the answer
      {true, "SA1CZ", "S|A||1C|Z"},
      {false, "12TDCZ", "1|2|T|D|C|Z"},  // not kept for a retry: nothing held
      // A Flush wants every answer owed so far: nothing is held from then on.
      {true, "!1tT", "|1|t|T"},     // Parse, Describe(statement), Flush
      {true, "12!TD", "||12|T|D"},  // answers that came before the Flush go out with it
      {true, "1tT!Z", "|||1tT|Z"},
  };
  for (const Case& c : cases) {
    std::string server = c.server;
    CAPTURE(server);
    FenceRetry fence;
    fence.on_attach("", c.capture);
    CHECK(pass(fence, c.server) == c.client);
  }
}

TEST_CASE("fence retry: SW001 before the answer starts re-runs the request once") {
  FenceRetry fence;
  fence.on_routed(7);
  fence.on_attach("BEGIN", true);
  fence.capture("Q-insert");
  CHECK(pass(fence, "1") == "");  // held
  CHECK(fence.on_fence_error());  // swallowed: the request will run again
  CHECK(fence.pending());
  CHECK(fence.on_request_answered(8192));  // its ReadyForQuery is swallowed too
  CHECK(fence.start_retry() == "BEGIN");
  CHECK(fence.replaying());
  CHECK(fence.replay_input() == "Q-insert");
  // The directory has not moved yet: wait; then it has.
  CHECK_FALSE(fence.poll(true, 7));
  CHECK(fence.poll(true, 8));
  CHECK_FALSE(fence.pending());
  fence.consume_replay(8);
  CHECK_FALSE(fence.replaying());

  // The retry runs: the first try's held ParseComplete is gone, the retry's own is shown once.
  fence.on_attach("BEGIN", true);
  fence.capture("Q-insert");
  CHECK(pass(fence, "1") == "");
  // It meets SW001 again: no second retry, the client gets a 40001.
  CHECK_FALSE(fence.on_fence_error());
  CHECK(pass(fence, "Z") == "1Z");
  CHECK_FALSE(fence.on_request_answered(8192));
  // The next transaction may be retried again.
  fence.on_attach("", true);
  CHECK(fence.on_fence_error());
}

TEST_CASE("fence retry: when SW001 is answered with 40001") {
  struct Case {
    const char* name;
    bool capture;
    const char* before;  // server messages relayed before the SW001
  };
  const std::vector<Case> cases = {
      {"the answer started (a row went out)", true, "12TD"},
      {"the answer started (a command completed)", true, "C"},
      {"a later request of the transaction", true, "CZ"},
      {"a batch outside the transaction", false, ""},
  };
  for (const Case& c : cases) {
    std::string name = c.name;
    CAPTURE(name);
    FenceRetry fence;
    fence.on_attach("", c.capture);
    fence.capture("Q");
    std::string before = c.before;
    pass(fence, before);
    if (before.find('Z') != std::string::npos) fence.on_request_answered(8192);
    CHECK_FALSE(fence.on_fence_error());
    CHECK_FALSE(fence.pending());
  }
}

TEST_CASE("fence retry: after a Flush, SW001 is retried only while no answer went out") {
  FenceRetry fence;
  fence.on_attach("", true);
  CHECK(pass(fence, "!") == "");
  CHECK(fence.on_fence_error());  // nothing went out yet: the request can still run again

  FenceRetry shown;
  shown.on_attach("", true);
  CHECK(pass(shown, "!1") == "|1");
  CHECK_FALSE(shown.on_fence_error());  // the client saw ParseComplete: a retry would repeat it
}

TEST_CASE("fence retry: a request too big to keep is not retried") {
  FenceRetry fence;
  fence.on_attach("", true);
  fence.capture(std::string(FenceRetry::kMaxCapturedRequest, 'x'));
  fence.capture("y");
  CHECK_FALSE(fence.on_fence_error());
}

TEST_CASE("fence retry: the directory wait is bounded") {
  FenceRetry fence;
  fence.on_routed(3);
  fence.on_attach("", true);
  CHECK(fence.on_fence_error());
  fence.on_request_answered(8192);
  fence.start_retry();
  int polls = 1;
  while (!fence.poll(false, 0)) ++polls;
  CHECK(polls == FenceRetry::kDirectoryPolls);
  CHECK_FALSE(fence.pending());
}
