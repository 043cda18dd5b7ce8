// Fuzz target: statement facts from the parser (libpg_query -> JSON tree -> StatementFacts), the
// caches in front of it, and the router's decision on those facts (four sharded tables: bigint,
// text and uuid keys; 64 buckets on two shards, one bucket MIGRATING).
//
// Input: SQL text, as a client's Query message carries it. Each input is analyzed twice:
// analyze_uncached() always parses; analyze() goes through this thread's exact-text and
// normalized-text caches, which persist across inputs, so a mutation that only changes literals
// is answered from a template built for an earlier input with its own values substituted.
//
// Invariants: both paths agree (same success, same statements, same facts, texts and literal
// locations for each: a normalized-cache hit must be indistinguishable from a parse); errors are
// the client's (42601, 54000, 54001, 22021), never the proxy's; every literal location lies
// inside the text; table and scope indexes are in range; max_param covers every $n; a route
// names a real shard and sorted, in-range buckets (or an error), and is the same for cached and
// parsed facts. The same text through parse_drop_index (the text reader the session uses for
// DROP INDEX, without libpg_query): never a crash or a read past the text, and a statement it
// accepts names at least one index, each with at least one identifier.
#include <string>
#include <string_view>

#include "config/config.h"
#include "fuzz_check.h"
#include "parser/analyze.h"
#include "parser/drop_index.h"
#include "router/directory.h"
#include "router/router.h"

namespace {

using namespace sw::parser;

// $n is whatever the grammar read ($0 parses; PostgreSQL refuses it later, and so does the
// router's Bind lookup), but max_param must cover every parameter a value names.
void check_value(const Value& value, const StatementFacts& facts, size_t text_size) {
  FUZZ_CHECK(value.location >= -1 && value.location < static_cast<int>(text_size));
  if (value.kind == ValueKind::Param) FUZZ_CHECK(value.param <= facts.max_param);
}

void check_column(const ColumnRef& column, const StatementFacts& facts) {
  FUZZ_CHECK(column.table >= -1 && column.table < static_cast<int>(facts.tables.size()));
  FUZZ_CHECK(column.scope >= 0 && column.scope < static_cast<int>(facts.scopes.size()));
}

void check_statement(const StatementFacts& facts, size_t text_size) {
  for (const TableRef& table : facts.tables) {
    FUZZ_CHECK(!table.name.empty());
    FUZZ_CHECK(table.scope >= 0 && table.scope < static_cast<int>(facts.scopes.size()));
  }
  for (size_t i = 0; i < facts.scopes.size(); ++i) {
    FUZZ_CHECK(facts.scopes[i].parent < static_cast<int>(i));  // parents come first
  }
  for (const KeyPredicate& predicate : facts.predicates) {
    check_column(predicate.column, facts);
    FUZZ_CHECK(predicate.in_list || predicate.values.size() == 1);
    for (const Value& value : predicate.values) check_value(value, facts, text_size);
  }
  for (const ColumnEquality& equality : facts.equalities) {
    check_column(equality.left, facts);
    check_column(equality.right, facts);
  }
  for (const Assignment& assignment : facts.assignments) {
    FUZZ_CHECK(assignment.table >= -1 && assignment.table < static_cast<int>(facts.tables.size()));
    check_value(assignment.value, facts, text_size);
  }
  for (const InsertFacts& insert : facts.inserts) {
    FUZZ_CHECK(insert.table >= -1 && insert.table < static_cast<int>(facts.tables.size()));
    for (const auto& row : insert.rows) {
      for (const Value& value : row) check_value(value, facts, text_size);
    }
  }
}

// describe_facts() plus what it leaves out that a cache hit must still get right: the
// statement's own text and each literal's location (Value::location is part of the contract).
std::string describe_all(const StatementFacts& facts) {
  std::string out = "[" + facts.text + "]\n" + describe_facts(facts);
  auto locations = [&out](const Value& value) { out += "@" + std::to_string(value.location); };
  for (const KeyPredicate& predicate : facts.predicates) {
    for (const Value& value : predicate.values) locations(value);
  }
  for (const Assignment& assignment : facts.assignments) locations(assignment.value);
  for (const InsertFacts& insert : facts.inserts) {
    for (const auto& row : insert.rows) {
      for (const Value& value : row) locations(value);
    }
  }
  return out;
}

// ---- the router on those facts (what the session and SHOW ROUTE do next) ----------------------

const sw::router::Directory& directory() {
  static const sw::router::Directory dir = [] {
    std::vector<sw::router::BucketEntry> buckets(64);
    for (uint32_t b = 0; b < buckets.size(); ++b) buckets[b].shard = static_cast<uint16_t>(b % 2);
    buckets[5].state = sw::router::BucketState::Migrating;
    return sw::router::Directory(3, {"s0", "s1"}, std::move(buckets));
  }();
  return dir;
}

const sw::router::RoutingRules& rules() {
  static const sw::router::RoutingRules rules = [] {
    sw::config::Sharding sharding;
    sharding.default_shard = "s0";
    sharding.tables = {{"orders", "tenant_id", "bigint", ""},
                       {"items", "tenant_id", "bigint", ""},
                       {"users", "name", "text", ""},
                       {"app.devices", "id", "uuid", ""}};
    return sw::router::RoutingRules::from_config(sharding).value();
  }();
  return rules;
}

// A route names a real shard and real, sorted buckets, or says why not; and the facts of a
// cache hit route exactly like the facts of a parse.
void check_route(const sw::router::Route& route, const sw::router::Route& from_cache) {
  using sw::router::RouteKind;
  const sw::router::Directory& dir = directory();
  if (route.kind == RouteKind::Shard || route.kind == RouteKind::Default) {
    FUZZ_CHECK(route.shard >= 0 && route.shard < static_cast<int>(dir.shards().size()));
  }
  if (route.kind == RouteKind::Shard) {
    FUZZ_CHECK(!route.buckets.empty());
    for (size_t i = 0; i < route.buckets.size(); ++i) {
      FUZZ_CHECK(route.buckets[i] < dir.bucket_count());
      if (i > 0) FUZZ_CHECK(route.buckets[i - 1] < route.buckets[i]);
    }
  }
  if (route.kind == RouteKind::Error) FUZZ_CHECK(!route.error.is_ok());
  FUZZ_CHECK(sw::router::describe_route(route, dir) == sw::router::describe_route(from_cache, dir));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sw::fuzz::ExactCopy sql(std::string_view(reinterpret_cast<const char*>(data), size));
  auto parsed = analyze_uncached(sql.view());
  auto cached = analyze(sql.view());
  FUZZ_CHECK(parsed.is_ok() == cached.is_ok());
  if (auto drop = sw::parser::parse_drop_index(sql.view())) {
    FUZZ_CHECK(!drop->names.empty());
    for (const auto& name : drop->names) FUZZ_CHECK(!name.empty());
  }
  if (!parsed) {
    const std::string& state = parsed.status().sqlstate;
    // Syntax error, statement too large, nested too deep, NUL byte: the client's input. A
    // proxy fault (XX000 "cannot read libpg_query's parse tree", ...) would be a bug here.
    FUZZ_CHECK(state == "42601" || state == "54000" || state == "54001" || state == "22021");
    FUZZ_CHECK(cached.status().sqlstate == state);
    return 0;
  }
  const auto& statements = (*parsed)->statements;
  FUZZ_CHECK(statements.size() == (*cached)->statements.size());
  for (size_t i = 0; i < statements.size(); ++i) {
    check_statement(statements[i], size);
    FUZZ_CHECK(describe_all(statements[i]) == describe_all((*cached)->statements[i]));
    check_route(sw::router::route(statements[i], nullptr, directory(), rules()),
                sw::router::route((*cached)->statements[i], nullptr, directory(), rules()));
  }
  check_route(sw::router::route_query(**parsed, nullptr, directory(), rules()),
              sw::router::route_query(**cached, nullptr, directory(), rules()));
  return 0;
}
