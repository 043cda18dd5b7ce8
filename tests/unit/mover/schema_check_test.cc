// The drift report between two shards' schemas of the configured tables: which columns, types,
// NOT NULL and indexes differ, per table, and a table missing on one side.
#include "mover/schema_check.h"

#include <doctest/doctest.h>

using namespace sw::mover;

namespace {
TableSchema orders() {
  TableSchema t;
  t.columns = {{"tenant_id", "bigint NOT NULL"}, {"id", "bigint NOT NULL"}, {"note", "text"}};
  t.indexes = {"CREATE UNIQUE INDEX ON public.orders USING btree (tenant_id, id)"};
  return t;
}
}  // namespace

TEST_CASE("schema_diff: equal schemas give no report") {
  SchemaByTable a{{"orders", orders()}}, b{{"orders", orders()}};
  CHECK(schema_diff("s0", a, "s1", b).empty());
  CHECK(schema_diff("s0", {}, "s1", {}).empty());
}

TEST_CASE("schema_diff: a column on one side only, a different type, a missing index, a missing table") {
  SchemaByTable a{{"orders", orders()}}, b{{"orders", orders()}};
  b["orders"].columns["extra"] = "integer";
  b["orders"].columns["note"] = "character varying(20)";
  a["orders"].indexes.insert("CREATE INDEX ON public.orders USING btree (note)");
  CHECK(schema_diff("s0", a, "s1", b) ==
        "orders: column \"note\" text on s0 but character varying(20) on s1, column \"extra\" only on s1, "
        "index (CREATE INDEX ON public.orders USING btree (note)) only on s0");
  b["orders"] = orders();
  b["orders"].columns["note"] = "text NOT NULL";
  a["orders"] = orders();
  a["items"] = orders();
  CHECK(schema_diff("s0", a, "s1", b) ==
        "items: missing on s1; orders: column \"note\" text on s0 but text NOT NULL on s1");
  CHECK(schema_diff("s1", b, "s0", a) ==
        "orders: column \"note\" text NOT NULL on s1 but text on s0; items: missing on s1");
}
