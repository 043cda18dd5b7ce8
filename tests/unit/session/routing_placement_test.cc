// Placing a route (session/routing.h place()): where each route kind runs in either protocol, in
// and out of a transaction, during a bucket's cutover, with and without the read lease.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "session/routing.h"

using sw::session::Placement;
using sw::session::Protocol;

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
