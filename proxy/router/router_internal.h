// Shared pieces of the router's implementation (internal to sw_router).
#pragma once

#include <string>
#include <vector>

#include "router/key_literal.h"
#include "router/router.h"

namespace sw::router::detail {

// What a value compared with (or assigned to) a shard key says about the key's bucket.
enum class KeyOutcome : uint8_t {
  Bucket,       // `bucket` is set
  Null,         // NULL: matches no row (an INSERT of it is refused by the caller)
  NeedsBind,    // a parameter, and no Bind values yet
  NotAKey,      // a column or expression: not a value the router can hash
  Undecidable,  // a float compared with an integer key that several keys round to (key_literal.h)
  Error,        // `error` is set (bad value syntax, bad parameter)
};

struct KeyBucket {
  KeyOutcome outcome = KeyOutcome::NotAKey;
  uint32_t bucket = 0;
  Status error;
};

// The bucket of `value` as a value of `rule`'s key: literals in their text form (as PostgreSQL
// coerces an untyped literal to the column's type); parameters in text format likewise, in
// binary format decoded as their Parse type OID, else as an explicit cast's type, else as the
// key's type. An integer key's numbers, numeric and float literals and parameters follow
// PostgreSQL's cast rules (key_literal.h): `compared` is the type a predicate's items meet the
// key in (key_comparison()), nullptr for a value assigned to the key.
KeyBucket key_bucket(const parser::Value& value, const TableRule& rule, const BindValues* params,
                     uint32_t bucket_count, const KeyComparison* compared = nullptr);
// The type the items of one predicate on `rule`'s key meet it in.
KeyComparison key_comparison(const std::vector<parser::Value>& values, const TableRule& rule,
                             const BindValues* params);

// int2/int4/int8 hash alike (PostgreSQL hashes them as int8), text/varchar alike, uuid.
bool same_hash_family(KeyType a, KeyType b);

bool is_system_table(const parser::TableRef& table);
std::string table_name(const parser::TableRef& table);                // "schema.name" or "name"
const char* statement_verb(const parser::StatementFacts& statement);  // "SELECT", "UPDATE", ...

Route make_error(std::string sqlstate, std::string message, std::string table = {});
// The default shard, or an Error when the directory does not know it.
Route make_default(const Directory& dir, const RoutingRules& rules, std::string reason);
// `text` when explaining, else "" (a fixed reason is still a heap allocation when it is long).
inline std::string explained(Explain explain, const char* text) {
  return explain == Explain::Yes ? std::string(text) : std::string();
}
std::string shard_names(const Directory& dir, const std::vector<int>& shards);

// The bucket list and table name of routes their users were done with (router::recycle), per
// thread: the next keyed route built on the thread takes them (DmlRouter::pinned_route).
struct SpareRouteBuffers {
  std::vector<uint32_t> buckets;
  std::string table;
};
SpareRouteBuffers& spare_route_buffers();

// SELECT / INSERT / UPDATE / DELETE / MERGE, and the queries of EXPLAIN, DECLARE CURSOR and
// COPY (query): route_dml.cc.
Route route_dml(const parser::StatementFacts& statement, const BindValues* params, const Directory& dir,
                const RoutingRules& rules, Explain explain);
// DDL, maintenance, LOCK, COPY table: route_ddl.cc.
Route route_ddl(const parser::StatementFacts& statement, const Directory& dir, const RoutingRules& rules);
// COPY to the client or from it: route_copy.cc.
Route route_copy(const parser::StatementFacts& statement, const BindValues* params, const Directory& dir,
                 const RoutingRules& rules);

}  // namespace sw::router::detail
