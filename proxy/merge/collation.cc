#include "merge/collation.h"

#include <algorithm>
#include <charconv>

#include "merge/binary_array.h"
#include "merge/value.h"

namespace sw::merge {
namespace {

void mark(std::vector<TextCompare>& compared, const std::vector<uint32_t>& types, int column,
          TextCompare how) {
  if (column < 0 || static_cast<size_t>(column) >= types.size()) return;
  if (!is_collatable_type(types[static_cast<size_t>(column)])) return;
  TextCompare& at = compared[static_cast<size_t>(column)];
  at = std::max(at, how);
}

// count(DISTINCT x): the shards' arrays of x are compared element by element for equality; an
// ordered aggregate's sort key arrays for order.
void mark_elements(std::vector<TextCompare>& compared, const std::vector<uint32_t>& types, int column,
                   TextCompare how = TextCompare::Equal) {
  if (column < 0 || static_cast<size_t>(column) >= types.size()) return;
  if (!is_collatable_type(array_element_type(types[static_cast<size_t>(column)]))) return;
  TextCompare& at = compared[static_cast<size_t>(column)];
  at = std::max(at, how);
}

// An aggregate merge's output compared whole (HAVING, ORDER BY): its shard column, or for
// string_agg the text elements of the shards' array it is joined from.
void mark_output(std::vector<TextCompare>& compared, const std::vector<uint32_t>& types,
                 const MergePlan& plan, int output, TextCompare how) {
  if (output < 0 || static_cast<size_t>(output) >= plan.outputs.size()) return;
  const OutputColumn& out = plan.outputs[static_cast<size_t>(output)];
  if (out.combine == Combine::StringAgg) {
    mark_elements(compared, types, out.source, how);
    return;
  }
  mark(compared, types, out.source, how);
}

void mark_having(std::vector<TextCompare>& compared, const std::vector<uint32_t>& types,
                 const MergePlan& plan, const HavingTerm& term) {
  for (const HavingTerm& child : term.children) mark_having(compared, types, plan, child);
  if (term.kind != HavingTerm::Kind::Compare) return;
  const bool equality = term.op == HavingTerm::Op::Eq || term.op == HavingTerm::Op::Ne;
  mark_output(compared, types, plan, term.column, equality ? TextCompare::Equal : TextCompare::Order);
}

// A number and the `delimiter` after it; false when there is none.
bool read_number(std::string_view text, size_t& at, char delimiter, int64_t& out) {
  const size_t end = text.find(delimiter, at);
  if (end == std::string_view::npos) return false;
  auto r = std::from_chars(text.data() + at, text.data() + end, out);
  if (r.ec != std::errc() || r.ptr != text.data() + end) return false;
  at = end + 1;
  return true;
}

// "<octets>:<text>", as the query writes names.
bool read_name(std::string_view text, size_t& at, std::string& out) {
  int64_t size = 0;
  if (!read_number(text, at, ':', size) || size < 0 || at + static_cast<size_t>(size) > text.size())
    return false;
  out.assign(text.substr(at, static_cast<size_t>(size)));
  at += static_cast<size_t>(size);
  return true;
}

std::string sql_literal(std::string_view text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

struct Verdict {
  bool ok = true;
  bool unknown = false;  // the collation could not be told
  std::string what;      // the column or COLLATE that decided, for the message
};

class Checker {
 public:
  Checker(TextCompare how, const ShardCollations& shard) : how_(how), shard_(shard) {}

  bool allows(const std::string& collation) const {
    const bool by_bytes = collation == "default" || collation.empty()
                              ? byte_order_collation(shard_.database)
                              : byte_order_collation(collation) || collation == "ucs_basic";
    if (by_bytes || how_ == TextCompare::Order) return by_bytes;
    return std::find(shard_.nondeterministic.begin(), shard_.nondeterministic.end(), collation) ==
           shard_.nondeterministic.end();
  }
  Verdict explicit_collation(const std::string& name) const {
    return Verdict{allows(name), false, "COLLATE \"" + name + "\""};
  }
  Verdict column(const ShardCollations::Column& column) const {
    const std::string collation = column.collation.empty() ? "default" : column.collation;
    const std::string named =
        collation == "default" ? "default, the database's " + shard_.database : collation;
    return Verdict{column.collation.empty() || allows(collation), false,
                   column.relation + "." + column.name + " (" + named + ")"};
  }
  // The column the describing shard numbered `at`, found on this shard by relation and name.
  Verdict origin(ColumnOrigin at, const ShardCollations& described_by) const {
    for (const ShardCollations::Column& there : described_by.columns) {
      if (there.table != at.table || there.attnum != at.attnum) continue;
      for (const ShardCollations::Column& c : shard_.columns) {
        if (c.relation == there.relation && c.name == there.name) return column(c);
      }
    }
    return Verdict{false, true, "a column of a relation the read does not name"};
  }
  // An expression's collation is one of its COLLATE clauses', of the columns it reads, or the
  // database default: every one of them must do.
  Verdict derived(const TextSource& source) const {
    if (source.opaque) return Verdict{false, true, "an expression over a subquery or derived table"};
    for (const std::string& name : source.nested) {
      if (Verdict v = explicit_collation(name); !v.ok) return v;
    }
    for (const std::string& name : source.columns) {
      bool found = false;
      for (const ShardCollations::Column& c : shard_.columns) {
        if (c.name != name) continue;
        found = true;
        if (Verdict v = column(c); !v.ok) return v;
      }
      if (!found) return Verdict{false, true, "\"" + name + "\", not a column of the tables the read names"};
    }
    return Verdict{allows("default"), false, "the database default (" + shard_.database + ")"};
  }

 private:
  TextCompare how_;
  const ShardCollations& shard_;
};

}  // namespace

std::vector<TextCompare> compared_text_columns(const MergePlan& plan,
                                               const std::vector<uint32_t>& shard_types) {
  std::vector<TextCompare> compared(shard_types.size(), TextCompare::None);
  const bool aggregate = plan.kind == MergeKind::Aggregate;
  auto shard_column = [&](int output) {
    if (!aggregate) return output;
    return output >= 0 && static_cast<size_t>(output) < plan.outputs.size()
               ? plan.outputs[static_cast<size_t>(output)].source
               : -1;
  };
  for (const OutputColumn& out : plan.outputs) {
    if (out.combine == Combine::Key) mark(compared, shard_types, out.source, TextCompare::Equal);
    if (out.combine == Combine::CountDistinct) mark_elements(compared, shard_types, out.source);
    for (const SortKey& key : out.within)
      mark_elements(compared, shard_types, key.column, TextCompare::Order);
    if (out.combine == Combine::Min || out.combine == Combine::Max)
      mark(compared, shard_types, out.source, TextCompare::Order);
  }
  if (plan.distinct) {
    const size_t columns = aggregate ? plan.outputs.size() : shard_types.size();
    for (size_t i = 0; i < columns; ++i)
      mark(compared, shard_types, shard_column(static_cast<int>(i)), TextCompare::Equal);
  }
  if (plan.having) mark_having(compared, shard_types, plan, *plan.having);
  for (const SortKey& key : plan.order_by) {
    if (aggregate) {
      mark_output(compared, shard_types, plan, key.column, TextCompare::Order);
    } else {
      mark(compared, shard_types, shard_column(key.column), TextCompare::Order);
    }
  }
  return compared;
}

std::string shard_collations_query(const std::vector<std::string>& tables) {
  std::string list;
  for (const std::string& table : tables) {
    if (!list.empty()) list += ", ";
    list += sql_literal(table);
  }
  std::string columns = "NULL";
  if (!list.empty())
    columns =
        "(SELECT string_agg(format('%s,%s,%s:%s%s:%s%s:%s', a.attrelid::oid, a.attnum, "
        "octet_length(coalesce(c.collname::text, "
        "'')), c.collname, octet_length(a.attrelid::regclass::text), a.attrelid::regclass, "
        "octet_length(a.attname::text), a.attname), '') FROM pg_attribute a LEFT JOIN pg_collation c ON "
        "c.oid "
        "= a.attcollation WHERE a.attnum > 0 AND NOT a.attisdropped AND a.attrelid IN (SELECT to_regclass(n) "
        "FROM unnest(ARRAY[" +
        list + "]::text[]) n))";
  return "SELECT CASE WHEN datlocprovider = 'i' THEN daticulocale ELSE datcollate END, " + columns +
         ", (SELECT string_agg(format('%s:%s', octet_length(collname::text), collname), '') FROM "
         "pg_collation "
         "WHERE NOT collisdeterministic) FROM pg_database WHERE datname = current_database();\n";
}

std::optional<ShardCollations> parse_shard_collations(const std::optional<std::string>& database,
                                                      const std::optional<std::string>& columns,
                                                      const std::optional<std::string>& nondeterministic) {
  ShardCollations out;
  out.database = database.value_or("");
  const std::string_view list = columns ? std::string_view(*columns) : std::string_view();
  for (size_t at = 0; at < list.size();) {
    ShardCollations::Column column;
    int64_t table = 0, attnum = 0;
    if (!read_number(list, at, ',', table) || !read_number(list, at, ',', attnum)) return std::nullopt;
    if (!read_name(list, at, column.collation) || !read_name(list, at, column.relation) ||
        !read_name(list, at, column.name))
      return std::nullopt;
    column.table = static_cast<uint32_t>(table);
    column.attnum = static_cast<int>(attnum);
    out.columns.push_back(std::move(column));
  }
  const std::string_view names = nondeterministic ? std::string_view(*nondeterministic) : std::string_view();
  for (size_t at = 0; at < names.size();) {
    std::string name;
    if (!read_name(names, at, name)) return std::nullopt;
    out.nondeterministic.push_back(std::move(name));
  }
  return out;
}

Status check_text_collations(const std::vector<TextCompare>& compared, const MergePlan& plan,
                             const ShardColumns& columns, const ShardCollations& shard) {
  const std::vector<ColumnOrigin>& origins = columns.origins;
  const std::vector<std::string>& names = columns.names;
  for (size_t i = 0; i < compared.size(); ++i) {
    if (compared[i] == TextCompare::None) continue;
    const Checker checker(compared[i], shard);
    const TextSource* source = i < plan.column_sources.size() ? &plan.column_sources[i] : nullptr;
    Verdict verdict;
    if (source != nullptr && !source->explicit_name.empty()) {
      verdict = checker.explicit_collation(source->explicit_name);
    } else if (i < origins.size() && origins[i].table != 0) {
      verdict = checker.origin(origins[i], columns.described_by != nullptr ? *columns.described_by : shard);
    } else if (source != nullptr) {
      verdict = checker.derived(*source);
    } else {
      verdict = Verdict{false, true, "an expression beside * in the select list"};
    }
    if (verdict.ok) continue;
    const bool order = compared[i] == TextCompare::Order;
    const std::string column =
        i < names.size() && static_cast<int>(i) >= plan.hidden ? " (result column \"" + names[i] + "\")" : "";
    if (verdict.unknown)
      return Status::client("0A000", std::string("the merge across shards ") + (order ? "orders" : "groups") +
                                         " text" + column + " whose collation shardwire cannot tell (" +
                                         verdict.what +
                                         "): write COLLATE \"C\" on it, or add a shard key value");
    if (order)
      return Status::client("0A000", "the merge across shards orders text" + column + " under " +
                                         verdict.what +
                                         ", and shardwire orders text across shards only by bytes: write "
                                         "COLLATE \"C\" on it or use a C-collated column, or add a shard "
                                         "key value");
    return Status::client("0A000",
                          "the merge across shards groups text" + column + " under " + verdict.what +
                              ", which is nondeterministic (equal text need not be equal bytes), and "
                              "shardwire groups text across shards by bytes: write COLLATE \"C\" on "
                              "it or use a deterministic collation, or add a shard key value");
  }
  return Status::ok();
}

}  // namespace sw::merge
