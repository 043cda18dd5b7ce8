// Routing an extended batch (session/routing.h scan_extended_batch) at every split point of a
// pipelined batch; a batch's Parses in reused buffers (the allocation count is deterministic: a
// replaced operator new counts this thread's calls while armed). Placing a route:
// routing_placement_test.cc.
#include "session/routing.h"

#include <doctest/doctest.h>

#include <iterator>
#include <string>
#include <vector>

#include "allocation_count.h"
#include "client_messages.h"

using sw::session::BatchStatement;
using sw::session::ClientStatements;
using sw::session::ExtendedBatch;
using sw::session::StatementRegistry;
#if SW_COUNTS_ALLOCATIONS
using sw::test::start_counting_allocations;
using sw::test::stop_counting_allocations;
#endif
using Kind = ExtendedBatch::Kind;

using sw::test::bind;
using sw::test::describe;
using sw::test::execute;
using sw::test::flush_message;
using sw::test::parse;
using sw::test::sync_message;

namespace {

struct Fixture {
  sw::wire::Limits limits;
  BatchStatement unnamed{"SELECT * FROM orders WHERE tenant_id = $1", {}};
  StatementRegistry registry;
  ClientStatements named;
  Fixture() { named.add("known", registry.intern("SELECT * FROM orders WHERE id = $1", {})); }
  ExtendedBatch scan(std::string_view input) {
    return sw::session::scan_extended_batch(input, limits, unnamed, named);
  }
};

struct SplitCase {
  const char* name;
  std::vector<std::string> messages;
  size_t decisive;  // messages that must have arrived before the batch is decided
  Kind kind;        // the decision
  bool control;     // a transaction-control candidate
};

}  // namespace

TEST_CASE("extended batch: undecided until its decisive message, at every split point") {
  Fixture f;
  const std::string select = "SELECT * FROM orders WHERE tenant_id = $1";
  const std::vector<SplitCase> cases = {
      {"Parse Bind Describe Execute Sync",
       {parse("", select), bind("", {"5"}), describe('P', ""), execute(), sync_message()},
       4,
       Kind::Bound,
       true},
      {"Bind Execute Sync of a prepared statement",
       {bind("known", {"7"}), execute(), sync_message()},
       2,
       Kind::Bound,
       true},
      {"Bind of the last unnamed statement, then Sync",
       {bind("", {"1"}), sync_message()},
       2,
       Kind::Bound,
       false},
      {"Parse Describe(statement) Sync: no Bind",
       {parse("s1", select), describe('S', "s1"), sync_message()},
       3,
       Kind::NoBind,
       false},
      {"Parse Describe(statement) Flush: no Bind",
       {parse("s1", select), describe('S', "s1"), flush_message()},
       3,
       Kind::NoBind,
       false},
      {"a statement Describe first: only a server answers it",
       {describe('S', "known"), bind("known", {"7"}), execute(), sync_message()},
       3,
       Kind::Bound,
       false},
      {"Bind of an unknown statement",
       {bind("nope", {"7"}), execute(), sync_message()},
       1,
       Kind::Unroutable,
       false},
      {"Parse of two statements",
       {parse("two", "SELECT 1; SELECT 2"), bind("two", {}), execute(), sync_message()},
       2,
       Kind::Unroutable,
       false},
      {"two pipelined batches: the first decides",
       {parse("", select), bind("", {"5"}), execute(), sync_message(), parse("", "BEGIN"), bind("", {}),
        execute(), sync_message()},
       3,
       Kind::Bound,
       true},
  };
  for (const SplitCase& c : cases) {
    std::string name = c.name;
    CAPTURE(name);
    std::string input;
    std::vector<size_t> ends;
    for (const auto& message : c.messages) {
      input += message;
      ends.push_back(input.size());
    }
    const size_t decided_at = ends[c.decisive - 1];
    for (size_t split = 0; split <= input.size(); ++split) {
      CAPTURE(split);
      ExtendedBatch batch = f.scan(std::string_view(input).substr(0, split));
      if (split < decided_at) {
        CHECK(batch.kind == Kind::NeedMore);
        continue;
      }
      REQUIRE(batch.kind == c.kind);
      CHECK((batch.control_size != 0) == c.control);
      if (c.control) CHECK(batch.control_size == decided_at);
    }
  }
}

TEST_CASE("extended batch: a NoBind batch says whether a Flush ended it (the server then stays)") {
  Fixture f;
  const std::string select = "SELECT * FROM orders WHERE tenant_id = $1";
  ExtendedBatch by_sync = f.scan(parse("s1", select) + describe('S', "s1") + sync_message());
  REQUIRE(by_sync.kind == Kind::NoBind);
  CHECK_FALSE(by_sync.flushed);
  ExtendedBatch by_flush = f.scan(parse("s1", select) + describe('S', "s1") + flush_message());
  REQUIRE(by_flush.kind == Kind::NoBind);
  CHECK(by_flush.flushed);
  CHECK(by_flush.parsed.find("s1") != nullptr);
}

TEST_CASE("extended batch: what a Bound batch knows") {
  Fixture f;
  std::string input = parse("s1", "BEGIN") + bind("s1", {}) + describe('P', "") + execute() + sync_message();
  ExtendedBatch batch = f.scan(input);
  REQUIRE(batch.kind == Kind::Bound);
  CHECK(batch.client_parsed);
  CHECK(batch.query() == "BEGIN");
  CHECK(batch.only().kind == sw::parser::StatementKind::Begin);
  CHECK(batch.parsed.find("s1") != nullptr);
  CHECK(batch.bind_end == parse("s1", "BEGIN").size() + bind("s1", {}).size());
  CHECK(batch.control_answer == std::string("1\0\0\0\4"
                                            "2\0\0\0\4"
                                            "n\0\0\0\4",
                                            15));

  batch = f.scan(bind("known", {"42"}) + execute() + sync_message());
  REQUIRE(batch.kind == Kind::Bound);
  CHECK_FALSE(batch.client_parsed);
  CHECK(batch.query() == "SELECT * FROM orders WHERE id = $1");
  CHECK(batch.control_answer == std::string("2\0\0\0\4", 5));
}

TEST_CASE("extended batch: a Bind of a known statement reuses the facts resolved at its Parse") {
  Fixture f;
  ExtendedBatch batch = f.scan(bind("known", {"42"}) + execute() + sync_message());
  REQUIRE(batch.kind == Kind::Bound);
  CHECK(batch.facts == f.named.find("known")->facts);
  CHECK(batch.types().empty());
  // The unnamed statement: its Parse's facts when it kept them, else analyzed at the Bind.
  auto parsed = sw::parser::analyze_uncached("SELECT * FROM orders WHERE tenant_id = $1");
  REQUIRE(parsed.is_ok());
  f.unnamed.facts = parsed.value();
  batch = f.scan(bind("", {"7"}) + execute() + sync_message());
  REQUIRE(batch.kind == Kind::Bound);
  CHECK(batch.facts == parsed.value());
  CHECK(batch.query() == "SELECT * FROM orders WHERE tenant_id = $1");
  f.unnamed.facts = nullptr;
  batch = f.scan(bind("", {"7"}) + execute() + sync_message());
  REQUIRE(batch.kind == Kind::Bound);
  REQUIRE(batch.facts != nullptr);
  CHECK(*batch.facts == *parsed.value());
}

TEST_CASE(
    "extended batch: a later Parse of a name replaces the earlier; nothing is left for the next batch") {
  Fixture f;
  const std::string first = "SELECT * FROM orders WHERE tenant_id = $1 AND id = 1";
  const std::string second = "SELECT * FROM orders WHERE tenant_id = $1 AND id = 2";
  const std::string input = parse("s1", first) + parse("", "SELECT 1") + parse("s1", second) +
                            bind("s1", {"5"}) + execute() + sync_message();
  ExtendedBatch batch = f.scan(input);
  REQUIRE(batch.kind == Kind::Bound);
  CHECK(batch.client_parsed);
  CHECK(batch.query() == second);
  // The Parse it names, where it is in the input (the session forwards that Parse without
  // analyzing it again: its facts are the batch's).
  CHECK(batch.parse_text == second);
  CHECK(batch.parse_text.data() == input.data() + input.find(second));
  CHECK(std::distance(batch.parsed.begin(), batch.parsed.end()) == 2);
  REQUIRE(batch.parsed.find("") != nullptr);
  CHECK(batch.parsed.find("")->query == "SELECT 1");

  // A batch scanned while another is alive has buffers of its own.
  ExtendedBatch other = f.scan(parse("s2", first) + bind("s2", {"6"}) + sync_message());
  REQUIRE(other.kind == Kind::Bound);
  CHECK(other.query() == first);
  CHECK(batch.query() == second);
  CHECK(other.parsed.find("s1") == nullptr);

  // The next batch reuses the buffers: only its own Parses.
  batch = f.scan(parse("s3", first) + bind("s3", {"7"}) + sync_message());
  other = f.scan(bind("", {"1"}) + sync_message());
  REQUIRE(batch.kind == Kind::Bound);
  CHECK(batch.query() == first);
  CHECK(batch.parsed.find("s1") == nullptr);
  CHECK(batch.parsed.find("") == nullptr);
  CHECK(std::distance(batch.parsed.begin(), batch.parsed.end()) == 1);
  REQUIRE(other.kind == Kind::Bound);
  CHECK(other.parsed.empty());
  CHECK(other.query() == f.unnamed.query);  // the session's unnamed statement
  CHECK(other.parse_text.empty());

  // More Parses than the thread keeps (8): all are seen, and the next batch still has only its own.
  std::string many;
  for (int i = 0; i < 10; ++i) {
    std::string text = first;
    text.append(" -- ").append(std::to_string(i));
    std::string name = "m";
    name.append(std::to_string(i));
    many.append(parse(name, text));
  }
  batch = f.scan(many + bind("m9", {"1"}) + sync_message());
  REQUIRE(batch.kind == Kind::Bound);
  CHECK(batch.query().substr(first.size()) == " -- 9");
  CHECK(std::distance(batch.parsed.begin(), batch.parsed.end()) == 10);
  batch = f.scan(parse("", second) + bind("", {"2"}) + sync_message());
  REQUIRE(batch.kind == Kind::Bound);
  CHECK(batch.query() == second);
  CHECK(std::distance(batch.parsed.begin(), batch.parsed.end()) == 1);
}

#if SW_COUNTS_ALLOCATIONS
TEST_CASE("extended batch: scanning a batch like the one before allocates nothing") {
  Fixture f;
  // pgbench -M extended: its statement text is longer than std::string's inline buffer.
  const std::string select = "SELECT abalance FROM pgbench_accounts WHERE aid = $1;";
  const std::string extended =
      parse("", select) + bind("", {"42"}) + describe('P', "") + execute() + sync_message();
  const std::string prepared = bind("known", {"42"}) + describe('P', "") + execute() + sync_message();
  for (const std::string* input : {&extended, &prepared}) {
    REQUIRE(f.scan(*input).kind == Kind::Bound);  // the first takes the buffers, and analyzes
    start_counting_allocations();
    {
      ExtendedBatch again = f.scan(*input);
      CHECK(again.kind == Kind::Bound);
    }
    CHECK(stop_counting_allocations() == 0);
  }
  // A batch scanned while the thread's buffers are taken makes its own.
  ExtendedBatch held = f.scan(extended);
  start_counting_allocations();
  ExtendedBatch nested = f.scan(extended);
  CHECK(stop_counting_allocations() > 0);
  CHECK(nested.query() == select);
  CHECK(held.query() == select);
}
#endif  // SW_COUNTS_ALLOCATIONS

TEST_CASE("extended batch: a malformed message is left for the session to report") {
  Fixture f;
  std::string bad = "B";
  bad += std::string("\0\0\0\3", 4);  // length below 4
  CHECK(f.scan(bad).kind == Kind::Unroutable);
  std::string short_bind;
  sw::wire::MessageWriter(short_bind).begin('B').cstr("").end();  // no statement name
  CHECK(f.scan(short_bind + sync_message()).kind == Kind::Unroutable);
}
