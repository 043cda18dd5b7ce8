// Routing an extended batch (at every split point of a pipelined batch) and placing a route; a
// batch's Parses in reused buffers (the allocation count is deterministic: a replaced operator
// new counts this thread's calls while armed).
#include "session/routing.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <iterator>
#include <new>
#include <string>
#include <vector>

#include "wire/message_writer.h"

// Sanitizer runtimes replace operator new themselves: the count is taken in the plain builds.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SW_SANITIZED_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SW_SANITIZED_BUILD 1
#endif
#endif

#ifndef SW_SANITIZED_BUILD
namespace {
thread_local bool counting = false;
thread_local uint64_t allocations = 0;  // operator new calls on this thread while counting
}  // namespace

// Not inlined: gcc would see free() of memory from operator new (-Wmismatched-new-delete).
[[gnu::noinline]] void* operator new(size_t size) {
  if (counting) ++allocations;
  if (void* memory = std::malloc(size == 0 ? 1 : size)) return memory;
  throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* memory) noexcept { std::free(memory); }
[[gnu::noinline]] void operator delete(void* memory, size_t) noexcept { std::free(memory); }
#endif  // SW_SANITIZED_BUILD

using sw::session::BatchStatement;
using sw::session::ClientStatements;
using sw::session::ExtendedBatch;
using sw::session::Placement;
using sw::session::Protocol;
using sw::session::StatementRegistry;
using Kind = ExtendedBatch::Kind;

namespace {

std::string parse(std::string_view name, std::string_view query) {
  std::string out;
  sw::wire::encode_parse(out, name, query, {});
  return out;
}

// A Bind of `statement` with text parameters.
std::string bind(std::string_view statement, const std::vector<std::string>& values) {
  std::string out;
  sw::wire::MessageWriter writer(out);
  writer.begin('B').cstr("").cstr(statement).int16(0).int16(static_cast<uint16_t>(values.size()));
  for (const auto& value : values) writer.int32(static_cast<uint32_t>(value.size())).bytes(value);
  writer.int16(0).end();
  return out;
}

std::string describe(char kind, std::string_view name) {
  std::string out;
  sw::wire::encode_target(out, 'D', kind, name);
  return out;
}

std::string execute() {
  std::string out;
  sw::wire::MessageWriter(out).begin('E').cstr("").int32(0).end();
  return out;
}

std::string sync_message() {
  std::string out;
  sw::wire::encode_sync(out);
  return out;
}

std::string flush_message() {
  std::string out;
  sw::wire::MessageWriter(out).begin('H').end();
  return out;
}

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

#ifndef SW_SANITIZED_BUILD
TEST_CASE("extended batch: scanning a batch like the one before allocates nothing") {
  Fixture f;
  // pgbench -M extended: its statement text is longer than std::string's inline buffer.
  const std::string select = "SELECT abalance FROM pgbench_accounts WHERE aid = $1;";
  const std::string extended =
      parse("", select) + bind("", {"42"}) + describe('P', "") + execute() + sync_message();
  const std::string prepared = bind("known", {"42"}) + describe('P', "") + execute() + sync_message();
  for (const std::string* input : {&extended, &prepared}) {
    REQUIRE(f.scan(*input).kind == Kind::Bound);  // the first takes the buffers, and analyzes
    counting = true;
    allocations = 0;
    {
      ExtendedBatch again = f.scan(*input);
      CHECK(again.kind == Kind::Bound);
    }
    counting = false;
    CHECK(allocations == 0);
  }
  // A batch scanned while the thread's buffers are taken makes its own.
  ExtendedBatch held = f.scan(extended);
  counting = true;
  allocations = 0;
  ExtendedBatch nested = f.scan(extended);
  counting = false;
  CHECK(allocations > 0);
  CHECK(nested.query() == select);
  CHECK(held.query() == select);
}
#endif  // SW_SANITIZED_BUILD

TEST_CASE("extended batch: a malformed message is left for the session to report") {
  Fixture f;
  std::string bad = "B";
  bad += std::string("\0\0\0\3", 4);  // length below 4
  CHECK(f.scan(bad).kind == Kind::Unroutable);
  std::string short_bind;
  sw::wire::MessageWriter(short_bind).begin('B').cstr("").end();  // no statement name
  CHECK(f.scan(short_bind + sync_message()).kind == Kind::Unroutable);
}

TEST_CASE("placing a route") {
  using sw::router::Route;
  using sw::router::RouteKind;
  struct Case {
    const char* name;
    RouteKind route;
    bool migrating_write;
    Protocol protocol;
    bool in_transaction;
    Placement::Kind placed;
    int shard;
    bool routed;
  };
  const std::vector<Case> cases = {
      {"a keyed statement runs on its shard", RouteKind::Shard, false, Protocol::Simple, false,
       Placement::Kind::Run, 2, true},
      {"no sharded table: the default shard", RouteKind::Default, false, Protocol::Extended, true,
       Placement::Kind::Run, 2, true},
      {"a write to a bucket in cutover waits", RouteKind::Shard, true, Protocol::Extended, false,
       Placement::Kind::WaitForCutover, -1, false},
      {"a session statement: the default shard, checked later", RouteKind::Session, false, Protocol::Simple,
       true, Placement::Kind::Run, 0, false},
      {"key at Bind: the default shard", RouteKind::AtBind, false, Protocol::Extended, false,
       Placement::Kind::Run, 0, false},
      {"a keyless read fans out", RouteKind::Scatter, false, Protocol::Simple, false, Placement::Kind::FanOut,
       -1, false},
      {"a keyless read fans out (extended)", RouteKind::Scatter, false, Protocol::Extended, false,
       Placement::Kind::FanOut, -1, false},
      {"DDL runs everywhere", RouteKind::AllShards, false, Protocol::Simple, false, Placement::Kind::FanOut,
       -1, false},
      {"DDL in the extended protocol is refused", RouteKind::AllShards, false, Protocol::Extended, false,
       Placement::Kind::Refuse, -1, false},
      {"in a transaction a keyless read joins every shard", RouteKind::Scatter, false, Protocol::Simple, true,
       Placement::Kind::FanOut, -1, false},
      {"in a transaction a keyless read joins every shard (extended)", RouteKind::Scatter, false,
       Protocol::Extended, true, Placement::Kind::FanOut, -1, false},
      {"DDL inside a transaction block is refused", RouteKind::AllShards, false, Protocol::Simple, true,
       Placement::Kind::Refuse, -1, false},
      {"a router error is the client's answer", RouteKind::Error, false, Protocol::Simple, false,
       Placement::Kind::Refuse, -1, false},
  };
  for (const Case& c : cases) {
    std::string name = c.name;
    CAPTURE(name);
    Route route;
    route.kind = c.route;
    route.shard = 2;
    route.writes = c.migrating_write;
    route.migrating = c.migrating_write;
    route.table = "orders";
    route.error = sw::Status::client("0A000", "no key");
    Placement placement = sw::session::place(route, c.protocol, c.in_transaction, 0, true);
    CHECK(placement.kind == c.placed);
    if (placement.kind == Placement::Kind::Run) {
      CHECK(placement.shard == c.shard);
      CHECK(placement.routed == c.routed);
    }
    if (placement.kind == Placement::Kind::Refuse) CHECK(placement.error.sqlstate == "0A000");
    // A route that does not need the default shard is placed the same without it (callers pass -1).
    CHECK(sw::session::needs_default_shard(route) == (c.shard == 0));
    if (!sw::session::needs_default_shard(route)) {
      Placement without = sw::session::place(route, c.protocol, c.in_transaction, -1, true);
      CHECK(without.kind == placement.kind);
      CHECK(without.shard == placement.shard);
      CHECK(without.routed == placement.routed);
    }
  }
}

TEST_CASE("COPY FROM STDIN into a sharded table: simple protocol, outside a transaction, after a cutover") {
  sw::router::Route route;
  route.kind = sw::router::RouteKind::Scatter;
  route.writes = true;
  route.copy_in = true;
  route.table = "orders";
  // The read lease does not matter: it writes (fences catch a stale directory).
  CHECK(sw::session::place(route, Protocol::Simple, false, 0, false).kind == Placement::Kind::FanOut);
  Placement extended = sw::session::place(route, Protocol::Extended, false, 0, true);
  CHECK(extended.kind == Placement::Kind::Refuse);
  CHECK(extended.error.sqlstate == "0A000");
  CHECK(extended.error.message.find("simple query protocol") != std::string::npos);
  // In a deferred transaction it runs too: the session joins it to the transaction's legs.
  CHECK(sw::session::place(route, Protocol::Simple, true, 0, true).kind == Placement::Kind::FanOut);
  route.migrating = true;
  CHECK(sw::session::place(route, Protocol::Simple, false, 0, true).kind == Placement::Kind::WaitForCutover);
}

TEST_CASE("a split INSERT fans out in both protocols, in and out of a transaction, after a cutover") {
  sw::router::Route route;
  route.kind = sw::router::RouteKind::Split;
  route.writes = true;
  route.table = "orders";
  for (Protocol protocol : {Protocol::Simple, Protocol::Extended}) {
    // In a deferred transaction too: the session joins the parts to the transaction's legs.
    for (bool in_transaction : {false, true})
      CHECK(sw::session::place(route, protocol, in_transaction, 0, false).kind == Placement::Kind::FanOut);
  }
  route.migrating = true;
  CHECK(sw::session::place(route, Protocol::Simple, false, 0, true).kind == Placement::Kind::WaitForCutover);
  CHECK(sw::session::place(route, Protocol::Simple, true, 0, true).kind == Placement::Kind::WaitForCutover);
}

TEST_CASE("a read of a bucket in cutover waits; without the read lease reads of sharded tables are refused") {
  using sw::router::Route;
  using sw::router::RouteKind;
  Route read;
  read.kind = RouteKind::Shard;
  read.shard = 1;
  read.table = "orders";
  read.migrating = true;
  CHECK(sw::session::place(read, Protocol::Simple, false, 0, true).kind == Placement::Kind::WaitForCutover);
  CHECK(sw::session::place(read, Protocol::Extended, false, 0, false).kind ==
        Placement::Kind::WaitForCutover);
  read.migrating = false;
  CHECK(sw::session::place(read, Protocol::Simple, false, 0, true).kind == Placement::Kind::Run);
  Placement refused = sw::session::place(read, Protocol::Simple, false, 0, false);
  CHECK(refused.kind == Placement::Kind::Refuse);
  CHECK(refused.error.sqlstate == "57P03");
  Route write = read;
  write.writes = true;  // writes route on the directory lease and meet the source's fence
  CHECK(sw::session::place(write, Protocol::Simple, false, 0, false).kind == Placement::Kind::Run);
  Route scatter;
  scatter.kind = RouteKind::Scatter;
  CHECK(sw::session::place(scatter, Protocol::Simple, false, 0, false).kind == Placement::Kind::Refuse);
  // A scatter read reads every bucket: while one is in cutover, both shards fence it, so it waits.
  scatter.migrating = true;
  scatter.buckets = {9};
  CHECK(sw::session::place(scatter, Protocol::Simple, false, 0, true).kind ==
        Placement::Kind::WaitForCutover);
  CHECK(sw::session::place(scatter, Protocol::Extended, false, 0, true).kind ==
        Placement::Kind::WaitForCutover);
  scatter.migrating = false;
  CHECK(sw::session::place(scatter, Protocol::Simple, false, 0, true).kind == Placement::Kind::FanOut);
  Route unsharded;
  unsharded.kind = RouteKind::Default;
  unsharded.shard = 0;
  CHECK(sw::session::place(unsharded, Protocol::Simple, false, 0, false).kind == Placement::Kind::Run);
}

// Callers skip the read lease where place() would not look at it: for every route kind, with and
// without cutover, reads and writes, both protocols, in and out of a transaction, a route that
// needs_read_lease() says false for is placed alike with and without a valid lease.
TEST_CASE("the read lease is consulted only for reads of sharded tables and scatter reads") {
  using sw::router::Route;
  using sw::router::RouteKind;
  int needing = 0;
  for (RouteKind kind : {RouteKind::Shard, RouteKind::Default, RouteKind::Session, RouteKind::AtBind,
                         RouteKind::Scatter, RouteKind::AllShards, RouteKind::Error}) {
    for (int bits = 0; bits < 16; ++bits) {
      Route route;
      route.kind = kind;
      route.shard = 1;
      route.table = "orders";
      route.writes = (bits & 1) != 0;
      route.migrating = (bits & 2) != 0;
      route.error = sw::Status::client("0A000", "no key");
      const Protocol protocol = (bits & 4) != 0 ? Protocol::Extended : Protocol::Simple;
      const bool in_transaction = (bits & 8) != 0;
      const Placement with = sw::session::place(route, protocol, in_transaction, 0, true);
      const Placement without = sw::session::place(route, protocol, in_transaction, 0, false);
      if (sw::session::needs_read_lease(route)) {
        ++needing;
        continue;
      }
      CAPTURE(static_cast<int>(kind));
      CAPTURE(bits);
      CHECK(with.kind == without.kind);
      CHECK(with.shard == without.shard);
    }
  }
  // Shard reads outside cutover (2 protocols x 2 transaction states) and every scatter route.
  CHECK(needing == 4 + 16);
}

TEST_CASE("INSERT ... SELECT on several shards: either protocol, after a cutover, on a confirmed directory") {
  using sw::router::Route;
  using sw::router::RouteKind;
  Route write;
  write.kind = RouteKind::Scatter;
  write.insert_select = true;
  write.writes = true;
  write.table = "archive";
  CHECK(sw::session::place(write, Protocol::Simple, false, 0, true).kind == Placement::Kind::FanOut);
  // It reads every shard's rows: like a scatter read, not on a directory the lease does not confirm.
  Placement stale = sw::session::place(write, Protocol::Simple, false, 0, false);
  CHECK(stale.kind == Placement::Kind::Refuse);
  CHECK(stale.error.sqlstate == "57P03");
  Route migrating = write;
  migrating.migrating = true;
  migrating.buckets = {9};
  CHECK(sw::session::place(migrating, Protocol::Simple, false, 0, true).kind ==
        Placement::Kind::WaitForCutover);
  // Either protocol, and in a transaction block (BEGIN still deferred) it joins the transaction's legs.
  for (Protocol protocol : {Protocol::Simple, Protocol::Extended}) {
    for (bool in_transaction : {false, true}) {
      INFO("extended " << (protocol == Protocol::Extended) << " in transaction " << in_transaction);
      CHECK(sw::session::place(write, protocol, in_transaction, 0, true).kind == Placement::Kind::FanOut);
    }
  }
}

TEST_CASE("a write of a reference table runs on every shard in either protocol, in a transaction too") {
  using sw::router::Route;
  using sw::router::RouteKind;
  Route write;
  write.kind = RouteKind::AllShards;
  write.reference_write = true;
  write.writes = true;
  write.table = "plans";
  CHECK(sw::session::place(write, Protocol::Simple, false, 0, true).kind == Placement::Kind::FanOut);
  for (Protocol protocol : {Protocol::Simple, Protocol::Extended}) {
    for (bool in_transaction : {false, true}) {
      INFO("extended " << (protocol == Protocol::Extended) << " in transaction " << in_transaction);
      CHECK(sw::session::place(write, protocol, in_transaction, 0, true).kind == Placement::Kind::FanOut);
    }
  }
  // With other statements in its Query on a server the session holds: refused, saying to send it alone.
  const sw::Status held = sw::session::reference_write_in_transaction(write);
  CHECK(held.sqlstate == "0A000");
  CHECK(held.message.find("send it alone") != std::string::npos);
  Route ddl = write;  // DDL on a reference table runs on every shard in turn, like a sharded table's
  ddl.reference_write = false;
  ddl.writes = false;
  CHECK(sw::session::place(ddl, Protocol::Simple, false, 0, true).kind == Placement::Kind::FanOut);
  Route read;  // reads of reference tables only: the default shard outside a transaction
  read.kind = RouteKind::Default;
  read.any_shard = true;
  read.shard = 0;
  Placement placed = sw::session::place(read, Protocol::Simple, false, 0, false);
  CHECK(placed.kind == Placement::Kind::Run);
  CHECK(placed.shard == 0);
}
