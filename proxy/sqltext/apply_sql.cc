#include "sqltext/apply_sql.h"

#include "router/bucket_hash.h"
#include "sqltext/catalog_sql.h"

namespace sw::sqltext {
namespace pgo = wire::pgoutput;

namespace {

// What the statements of one table need to know, derived from its Relation and configuration.
struct TableShape {
  std::string display;              // schema.name, for messages
  std::string qualified;            // "schema"."name"
  std::vector<size_t> key_columns;  // replica identity columns, in relation order
  size_t shard_key = 0;             // index of the configured key column
  std::optional<size_t> version;    // index of the configured version column
  router::KeyType key_type = router::KeyType::Int8;
};

Status prerequisite(const TableShape& shape, const std::string& what) {
  return Status::server("55000", "mover: table " + shape.display + ": " + what);
}

Result<TableShape> shape_of(const pgo::Relation& relation, const config::ShardedTable& table) {
  TableShape shape;
  shape.display = relation.namespace_name + "." + relation.name;
  shape.qualified = quote_identifier(relation.namespace_name) + "." + quote_identifier(relation.name);
  auto key_type = router::key_type_from_name(table.type);
  if (!key_type) return key_type.status();
  shape.key_type = *key_type;
  if (relation.replica_identity == 'f')
    return prerequisite(
        shape,
        "REPLICA IDENTITY FULL is not supported; the mover needs a primary key or a replica identity index");
  for (size_t i = 0; i < relation.columns.size(); ++i)
    if (relation.columns[i].key) shape.key_columns.push_back(i);
  if (relation.replica_identity == 'n' || shape.key_columns.empty())
    return prerequisite(shape,
                        "has no replica identity; the mover needs a primary key or a replica identity index");
  auto key = relation.column_index(table.key);
  if (!key) return prerequisite(shape, "shard key column \"" + table.key + "\" is not published");
  if (!relation.columns[*key].key)
    return prerequisite(
        shape, "shard key column \"" + table.key + "\" is not part of the replica identity (primary key)");
  shape.shard_key = *key;
  if (!table.version_column.empty()) {
    shape.version = relation.column_index(table.version_column);
    if (!shape.version)
      return prerequisite(shape, "version column \"" + table.version_column + "\" is not published");
  }
  return shape;
}

// Numbered text parameters.
class Params {
 public:
  std::string add(std::optional<std::string> value) {
    values_.push_back(std::move(value));
    std::string marker(1, '$');
    return marker += std::to_string(values_.size());
  }
  std::vector<std::optional<std::string>> take() { return std::move(values_); }

 private:
  std::vector<std::optional<std::string>> values_;
};

bool is_sent(const pgo::ColumnValue& v) { return v.kind != pgo::ColumnKind::UnchangedToast; }

bool all_sent(const pgo::TupleData& tuple) {
  for (const auto& v : tuple)
    if (!is_sent(v)) return false;
  return true;
}

// A column's value as a text parameter. Unchanged-TOAST values have none (callers skip them).
Result<std::optional<std::string>> param_value(const TableShape& shape, const pgo::Relation& relation,
                                               const pgo::TupleData& tuple, size_t column) {
  const pgo::ColumnValue& v = tuple[column];
  switch (v.kind) {
    case pgo::ColumnKind::Null: return std::optional<std::string>();
    case pgo::ColumnKind::Text: return v.value;
    case pgo::ColumnKind::Binary:
      return Status::server("08P01",
                            "mover: table " + shape.display + ": binary column values are not supported");
    case pgo::ColumnKind::UnchangedToast: break;
  }
  return prerequisite(shape, "column \"" + relation.columns[column].name +
                                 "\" is an unchanged TOAST value where the mover needs it");
}

// The bucket of the row `tuple` describes (its shard key column).
Result<uint32_t> bucket_of_tuple(const TableShape& shape, const pgo::Relation& relation,
                                 const pgo::TupleData& tuple, const router::BucketSet& buckets) {
  auto value = param_value(shape, relation, tuple, shape.shard_key);
  if (!value) return value.status();
  if (!value->has_value()) return router::kNullKeyBucket;
  return router::bucket_of_text_value(shape.key_type, **value, buckets.bucket_count());
}

// "<k1> = $a AND <k2> = $b" with the key values of `tuple`.
Result<std::string> key_predicate(const TableShape& shape, const pgo::Relation& relation,
                                  const pgo::TupleData& tuple, Params& params) {
  std::string sql;
  for (size_t k : shape.key_columns) {
    auto value = param_value(shape, relation, tuple, k);
    if (!value) return value.status();
    sql += (sql.empty() ? "" : " AND ") + quote_identifier(relation.columns[k].name) + " = " +
           params.add(std::move(*value));
  }
  return sql;
}

// INSERT ... ON CONFLICT (key) DO UPDATE SET ... [WHERE version guard]. Every column must be sent.
Result<ApplyStatement> upsert(const TableShape& shape, const pgo::Relation& relation,
                              const pgo::TupleData& tuple) {
  Params params;
  std::string columns, values, conflict, set;
  for (size_t i = 0; i < relation.columns.size(); ++i) {
    auto value = param_value(shape, relation, tuple, i);
    if (!value) return value.status();
    const std::string name = quote_identifier(relation.columns[i].name);
    columns += (i ? ", " : "") + name;
    values += (i ? ", " : "") + params.add(std::move(*value));
    if (relation.columns[i].key) {
      conflict += (conflict.empty() ? "" : ", ") + name;
    } else {
      if (!set.empty()) set += ", ";
      set.append(name).append(" = EXCLUDED.").append(name);
    }
  }
  // OVERRIDING SYSTEM VALUE: the source's value of a GENERATED ALWAYS AS IDENTITY column is the
  // row's; the clause changes nothing for other columns.
  std::string sql = "INSERT INTO " + shape.qualified + " (" + columns + ") OVERRIDING SYSTEM VALUE VALUES (" +
                    values + ") ON CONFLICT (" + conflict + ") ";
  if (set.empty()) {
    sql += "DO NOTHING";
  } else {
    sql += "DO UPDATE SET " + set;
    if (shape.version) {
      const std::string v = quote_identifier(relation.columns[*shape.version].name);
      sql += " WHERE (" + shape.qualified + "." + v + " > EXCLUDED." + v + ") IS NOT TRUE";
    }
  }
  return ApplyStatement{std::move(sql), params.take()};
}

Result<ApplyStatement> delete_by_key(const TableShape& shape, const pgo::Relation& relation,
                                     const pgo::TupleData& key) {
  Params params;
  auto where = key_predicate(shape, relation, key, params);
  if (!where) return where.status();
  return ApplyStatement{"DELETE FROM " + shape.qualified + " WHERE " + *where, params.take()};
}

// UPDATE ... SET <sent columns> WHERE <key of where_tuple> [AND version < new version]. Key
// columns are set only when `set_keys`. nullopt when there is nothing to set.
Result<std::optional<ApplyStatement>> update_in_place(const TableShape& shape, const pgo::Relation& relation,
                                                      const pgo::TupleData& new_tuple,
                                                      const pgo::TupleData& where_tuple, bool set_keys) {
  Params params;
  std::string set;
  for (size_t i = 0; i < relation.columns.size(); ++i) {
    if (!is_sent(new_tuple[i]) || (relation.columns[i].key && !set_keys)) continue;
    auto value = param_value(shape, relation, new_tuple, i);
    if (!value) return value.status();
    set += (set.empty() ? "" : ", ") + quote_identifier(relation.columns[i].name) + " = " +
           params.add(std::move(*value));
  }
  if (set.empty()) return std::optional<ApplyStatement>();
  auto where = key_predicate(shape, relation, where_tuple, params);
  if (!where) return where.status();
  std::string sql = "UPDATE " + shape.qualified + " SET " + set + " WHERE " + *where;
  if (shape.version && is_sent(new_tuple[*shape.version])) {
    auto version = param_value(shape, relation, new_tuple, *shape.version);
    if (!version) return version.status();
    sql += " AND (" + quote_identifier(relation.columns[*shape.version].name) + " > " +
           params.add(std::move(*version)) + ") IS NOT TRUE";
  }
  return std::optional<ApplyStatement>(ApplyStatement{std::move(sql), params.take()});
}

Status tuple_fits(const TableShape& shape, const pgo::Relation& relation, const pgo::TupleData& tuple) {
  if (tuple.size() == relation.columns.size()) return Status::ok();
  return Status::server("08P01", "mover: table " + shape.display + ": a change has " +
                                     std::to_string(tuple.size()) + " columns, its relation " +
                                     std::to_string(relation.columns.size()));
}

using Statements = std::vector<ApplyStatement>;

Result<Statements> one(Result<ApplyStatement> statement) {
  if (!statement) return statement.status();
  return Statements{std::move(*statement)};
}

// `statements`, each marked as changing `buckets` (ApplyStatement::buckets).
Result<Statements> changing(Result<Statements> statements, const std::vector<uint32_t>& buckets) {
  if (statements)
    for (ApplyStatement& statement : *statements) statement.buckets = buckets;
  return statements;
}

// An UPDATE with the old row, the new row or both in the set (the contract's cases).
Result<Statements> update_in_set(const TableShape& shape, const pgo::Relation& relation,
                                 const pgo::Update& update, const pgo::TupleData& old_key, bool old_in,
                                 bool new_in) {
  const bool key_changed = update.old_kind != pgo::OldTuple::None;
  if (old_in && !new_in) return one(delete_by_key(shape, relation, old_key));
  if (!old_in) return one(upsert(shape, relation, update.new_tuple));  // moves into the set
  if (key_changed && all_sent(update.new_tuple)) {
    auto del = delete_by_key(shape, relation, old_key);
    if (!del) return del.status();
    auto ins = upsert(shape, relation, update.new_tuple);
    if (!ins) return ins.status();
    return Statements{std::move(*del), std::move(*ins)};
  }
  auto statement = update_in_place(shape, relation, update.new_tuple, old_key, /*set_keys=*/key_changed);
  if (!statement) return statement.status();
  if (!*statement) return Statements{};
  return Statements{std::move(**statement)};
}

}  // namespace

const config::ShardedTable* find_sharded_table(const std::vector<config::ShardedTable>& tables,
                                               const pgo::Relation& relation) {
  for (const auto& table : tables) {
    const size_t dot = table.name.find('.');
    if (dot == std::string::npos) {
      if (table.name == relation.name) return &table;
    } else if (table.name.compare(0, dot, relation.namespace_name) == 0 &&
               dot == relation.namespace_name.size() &&
               table.name.compare(dot + 1, std::string::npos, relation.name) == 0) {
      return &table;
    }
  }
  return nullptr;
}

Result<Statements> insert_statements(const pgo::Relation& relation, const config::ShardedTable& table,
                                     const router::BucketSet& buckets, const pgo::Insert& insert) {
  auto shape = shape_of(relation, table);
  if (!shape) return shape.status();
  if (Status s = tuple_fits(*shape, relation, insert.new_tuple); !s) return s;
  auto bucket = bucket_of_tuple(*shape, relation, insert.new_tuple, buckets);
  if (!bucket) return bucket.status();
  if (!buckets.contains(*bucket)) return Statements{};
  return changing(one(upsert(*shape, relation, insert.new_tuple)), {*bucket});
}

Result<Statements> update_statements(const pgo::Relation& relation, const config::ShardedTable& table,
                                     const router::BucketSet& buckets, const pgo::Update& update) {
  auto shape = shape_of(relation, table);
  if (!shape) return shape.status();
  if (Status s = tuple_fits(*shape, relation, update.new_tuple); !s) return s;
  const bool key_changed = update.old_kind != pgo::OldTuple::None;
  if (key_changed) {
    if (Status s = tuple_fits(*shape, relation, update.old_tuple); !s) return s;
  }
  auto new_bucket = bucket_of_tuple(*shape, relation, update.new_tuple, buckets);
  if (!new_bucket) return new_bucket.status();
  Result<uint32_t> old_bucket =
      key_changed ? bucket_of_tuple(*shape, relation, update.old_tuple, buckets) : new_bucket;
  if (!old_bucket) return old_bucket.status();
  const bool old_in = buckets.contains(*old_bucket), new_in = buckets.contains(*new_bucket);
  const pgo::TupleData& old_key = key_changed ? update.old_tuple : update.new_tuple;

  if (!old_in && !new_in) return Statements{};
  std::vector<uint32_t> changed;
  if (old_in) changed.push_back(*old_bucket);
  if (new_in && *new_bucket != *old_bucket) changed.push_back(*new_bucket);
  return changing(update_in_set(*shape, relation, update, old_key, old_in, new_in), changed);
}

Result<Statements> delete_statements(const pgo::Relation& relation, const config::ShardedTable& table,
                                     const router::BucketSet& buckets, const pgo::Delete& del) {
  auto shape = shape_of(relation, table);
  if (!shape) return shape.status();
  if (Status s = tuple_fits(*shape, relation, del.old_tuple); !s) return s;
  auto bucket = bucket_of_tuple(*shape, relation, del.old_tuple, buckets);
  if (!bucket) return bucket.status();
  if (!buckets.contains(*bucket)) return Statements{};
  return changing(one(delete_by_key(*shape, relation, del.old_tuple)), {*bucket});
}

Result<Statements> truncate_statements(const pgo::Relation& relation, const config::ShardedTable& table,
                                       const router::BucketSet& buckets) {
  if (buckets.empty()) return Statements{};
  auto key_type = router::key_type_from_name(table.type);
  if (!key_type) return key_type.status();
  auto key = relation.column_index(table.key);
  const std::string display = relation.namespace_name + "." + relation.name;
  if (!key)
    return Status::server(
        "55000", "mover: table " + display + ": shard key column \"" + table.key + "\" is not published");
  std::string sql = "DELETE FROM " + quote_identifier(relation.namespace_name) + "." +
                    quote_identifier(relation.name) + " WHERE shardwire.bucket_of(" +
                    quote_identifier(table.key) + "::" + router::key_type_name(*key_type) + ", " +
                    std::to_string(buckets.bucket_count()) + ") = ANY($1::int[])";
  return Statements{ApplyStatement{std::move(sql), {buckets.array_literal()}, buckets.list()}};
}

bool is_row_change(const pgo::Message& message) {
  return std::holds_alternative<pgo::Insert>(message) || std::holds_alternative<pgo::Update>(message) ||
         std::holds_alternative<pgo::Delete>(message) || std::holds_alternative<pgo::Truncate>(message);
}

Result<Statements> change_statements(const pgo::Message& message, const pgo::RelationCache& relations,
                                     const std::vector<config::ShardedTable>& tables,
                                     const router::BucketSet& buckets) {
  // Looks the relation up; nullptr table when it is not configured.
  struct Target {
    const pgo::Relation* relation = nullptr;
    const config::ShardedTable* table = nullptr;
  };
  auto target_of = [&](uint32_t oid) -> Result<Target> {
    auto relation = relations.find(oid);
    if (!relation) return relation.status();
    return Target{*relation, find_sharded_table(tables, **relation)};
  };

  if (const auto* insert = std::get_if<pgo::Insert>(&message)) {
    auto t = target_of(insert->relation_oid);
    if (!t) return t.status();
    return t->table ? insert_statements(*t->relation, *t->table, buckets, *insert) : Statements{};
  }
  if (const auto* update = std::get_if<pgo::Update>(&message)) {
    auto t = target_of(update->relation_oid);
    if (!t) return t.status();
    return t->table ? update_statements(*t->relation, *t->table, buckets, *update) : Statements{};
  }
  if (const auto* del = std::get_if<pgo::Delete>(&message)) {
    auto t = target_of(del->relation_oid);
    if (!t) return t.status();
    return t->table ? delete_statements(*t->relation, *t->table, buckets, *del) : Statements{};
  }
  if (const auto* truncate = std::get_if<pgo::Truncate>(&message)) {
    Statements out;
    for (uint32_t oid : truncate->relation_oids) {
      auto t = target_of(oid);
      if (!t) return t.status();
      if (!t->table) continue;
      auto statements = truncate_statements(*t->relation, *t->table, buckets);
      if (!statements) return statements.status();
      for (auto& s : *statements) out.push_back(std::move(s));
    }
    return out;
  }
  if (std::holds_alternative<pgo::StreamStart>(message) || std::holds_alternative<pgo::StreamStop>(message) ||
      std::holds_alternative<pgo::StreamCommit>(message) ||
      std::holds_alternative<pgo::StreamAbort>(message)) {
    return Status::server("08P01",
                          "mover: unexpected streamed-transaction message (the stream uses proto_version 1)");
  }
  return Statements{};
}

}  // namespace sw::sqltext
