// The catch-up applier's SQL (docs/architecture.md §8.4): one decoded pgoutput change of the source shard
// -> the statements that apply it to the target shard, restricted to the moving buckets. Pure:
// no I/O, no clocks; safe from any thread.
//
// Contract per change (the bucket of a row = router::bucket_of_text_value(key type, the shard key
// column's text value, buckets.bucket_count()); a NULL key is bucket 0):
//  * INSERT of a row in the set -> INSERT ... OVERRIDING SYSTEM VALUE VALUES ... (identity
//    columns keep the source's values) ON CONFLICT (<replica identity columns>) DO UPDATE
//    SET <every non-key column> = EXCLUDED.<column>
//    [WHERE (<t>.<version> > EXCLUDED.<version>) IS NOT TRUE]
//    (DO NOTHING when every column is a key column). Replays are idempotent. The stream from the
//    snapshot's position is ordered and complete, so every change is applied; the version guard
//    only keeps a change from LOWERING the version of a row the target holds (one the stream did
//    not write, e.g. written there past the fence). A change that keeps the version (an UPDATE
//    that does not touch it) or raises it, or where either version is NULL, is always applied.
//  * UPDATE: old bucket from the old key tuple when the key changed, else the new row's bucket.
//    - neither in the set: nothing;  old in, new out: DELETE the old key;
//    - old out, new in: the INSERT form of the new row (error when an unchanged-TOAST column is
//      missing: the target has no row to keep it from);
//    - both in, key changed: DELETE old key + INSERT form of the new row when every column was
//      sent; otherwise UPDATE ... SET <sent columns incl. key> WHERE <old key> [AND version guard];
//    - both in, key unchanged: UPDATE ... SET <sent non-key columns, unchanged-TOAST ones left
//      out> WHERE <key> [AND (<version> > $new_version) IS NOT TRUE] (no statement when nothing
//      is set).
//  * DELETE of a row in the set -> DELETE ... WHERE <key = old key values>.
//  * TRUNCATE -> per configured table: DELETE FROM t WHERE shardwire.bucket_of(<key>::<type>, N)
//    = ANY($1::int[]) (the target's other buckets must survive).
// Tables not configured are skipped. Identifiers are always double-quoted; the table is the
// Relation's schema-qualified name. Values go as untyped text parameters, so PostgreSQL types
// them from the target's columns (no value is ever spliced into SQL text).
//
// Prerequisites, checked per change (Status 55000 naming the table otherwise): replica identity
// DEFAULT with a primary key or USING INDEX (not FULL, not NOTHING), the shard key column part of
// it, the configured version column published. Values must be text ('b' binary values: 08P01).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/config.h"
#include "router/bucket_set.h"
#include "wire/pgoutput.h"

namespace sw::sqltext {

struct ApplyStatement {
  std::string sql;
  std::vector<std::optional<std::string>> params;  // text format; nullopt is NULL
  // The moving buckets whose rows it may change (a key-changing UPDATE: old and new; TRUNCATE:
  // every bucket of the set). Live verification explains differences with them (§8.5).
  std::vector<uint32_t> buckets;
};

// The configured table a Relation is, or nullptr: "orders" matches a table of that name in any
// schema, "app.orders" only the one in schema app (as router::RoutingRules::find).
const config::ShardedTable* find_sharded_table(const std::vector<config::ShardedTable>& tables,
                                               const wire::pgoutput::Relation& relation);

// Statements for one change of `relation`, a configured `table` (see the contract above).
Result<std::vector<ApplyStatement>> insert_statements(const wire::pgoutput::Relation& relation,
                                                      const config::ShardedTable& table,
                                                      const router::BucketSet& buckets,
                                                      const wire::pgoutput::Insert& insert);
Result<std::vector<ApplyStatement>> update_statements(const wire::pgoutput::Relation& relation,
                                                      const config::ShardedTable& table,
                                                      const router::BucketSet& buckets,
                                                      const wire::pgoutput::Update& update);
Result<std::vector<ApplyStatement>> delete_statements(const wire::pgoutput::Relation& relation,
                                                      const config::ShardedTable& table,
                                                      const router::BucketSet& buckets,
                                                      const wire::pgoutput::Delete& del);
// Empty when `buckets` is empty.
Result<std::vector<ApplyStatement>> truncate_statements(const wire::pgoutput::Relation& relation,
                                                        const config::ShardedTable& table,
                                                        const router::BucketSet& buckets);

// Any pgoutput message: Insert/Update/Delete/Truncate are looked up in `relations` (an unknown
// oid is an 08P01 error) and translated when their table is configured; Begin, Commit, Origin,
// Relation, Type and DecodingMessage give no statements; the protocol-2 stream messages are an
// error (the stream is started with proto_version '1').
Result<std::vector<ApplyStatement>> change_statements(const wire::pgoutput::Message& message,
                                                      const wire::pgoutput::RelationCache& relations,
                                                      const std::vector<config::ShardedTable>& tables,
                                                      const router::BucketSet& buckets);

// True for the messages change_statements may turn into statements (Insert, Update, Delete,
// Truncate).
bool is_row_change(const wire::pgoutput::Message& message);

}  // namespace sw::sqltext
