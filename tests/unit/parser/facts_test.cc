// Routing facts of analyze(): tables, predicates, equalities, INSERT rows, assignments, scopes
// and SELECT features, pinned through describe_facts() (format in parser/facts_format.cc).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "parser/analyze.h"
#include "single_statement.h"

using sw::parser::describe_facts;
using sw::parser::StatementFacts;
using sw::parser::StatementKind;
using sw::parser::TableRole;
using sw::parser::ValueKind;
using sw::test::facts;

namespace {

std::string described(const std::string& sql) { return describe_facts(facts(sql)); }

}  // namespace

TEST_CASE("SELECT: tables, aliases, top-level AND predicates, IN lists, = ANY, OR is unusable") {
  CHECK(described("SELECT * FROM app.orders o WHERE o.tenant_id = 5 AND status IN ('a', $1) "
                  "AND (x = 1 OR y = 2)") ==
        "kind=Select query=Select writes=no returning=no complete=yes max_param=1\n"
        "scope 0 parent=-1 features=none non_table_from=no\n"
        "table 0 app.orders as o role=read scope=0\n"
        "predicate t0.tenant_id = 5 usable\n"
        "predicate status@0 in ('a', $1) usable\n"
        "predicate x@0 = 1 unusable\n"
        "predicate y@0 = 2 unusable\n");
  // Either side order; NOT IN and <> ANY are not predicates; = ANY(ARRAY[...]) is an IN list,
  // = ANY('{...}') and = ANY($n) array predicates (the router reads the elements).
  CHECK(described("SELECT * FROM t WHERE 7 = k AND j NOT IN (1) AND m = ANY($2) AND n <> ANY($1)") ==
        "kind=Select query=Select writes=no returning=no complete=yes max_param=2\n"
        "scope 0 parent=-1 features=none non_table_from=no\n"
        "table 0 t role=read scope=0\n"
        "predicate k@0 = 7 usable\n"
        "predicate m@0 = any ($2) usable\n");
  CHECK(described("SELECT * FROM t WHERE k = ANY(ARRAY[1, $1]) AND j = ANY('{3,4}'::int8[]) AND "
                  "m = ANY(ARRAY(SELECT 1)) AND (n = ANY(ARRAY[2]) OR true)") ==
        "kind=Select query=Select writes=no returning=no complete=yes max_param=1\n"
        "scope 0 parent=-1 features=none non_table_from=no\n"
        "scope 1 parent=0 features=none non_table_from=no\n"
        "table 0 t role=read scope=0\n"
        "predicate k@0 in (1, $1) usable\n"
        "predicate j@0 = any ('{3,4}'::int8[]) usable\n"
        "predicate n@0 in (2) unusable\n");
  // NOT makes a predicate unusable too.
  CHECK(facts("SELECT * FROM t WHERE NOT (k = 1)").predicates.at(0).usable == false);
}

TEST_CASE("literal values keep their text and kind; casts are recorded") {
  auto f = facts(
      "SELECT * FROM t WHERE a IN (-5, 007, 1.50, -2.5e3, 99999999999, 'it''s', "
      "E'x\\ny', $$d$$, NULL, true, '6ba7b810-9dad-11d1-80b4-00c04fd430c8'::uuid, "
      "CAST($3 AS bigint), uuid 'u', 1 + 1, b)");
  const auto& v = f.predicates.at(0).values;
  REQUIRE(v.size() == 15);
  CHECK((v[0].kind == ValueKind::Number && v[0].text == "-5"));
  CHECK(v[1].text == "007");
  CHECK(v[2].text == "1.50");
  CHECK(v[3].text == "-2.5e3");
  CHECK(v[4].text == "99999999999");
  CHECK((v[5].kind == ValueKind::String && v[5].text == "it's"));
  CHECK(v[6].text == "x\ny");
  CHECK(v[7].text == "d");
  CHECK(v[8].kind == ValueKind::Null);
  CHECK((v[9].kind == ValueKind::Bool && v[9].text == "true"));
  CHECK((v[10].kind == ValueKind::String && v[10].cast == "uuid"));
  CHECK((v[11].kind == ValueKind::Param && v[11].param == 3 && v[11].cast == "int8"));
  CHECK((v[12].kind == ValueKind::String && v[12].text == "u" && v[12].cast == "uuid"));
  CHECK(v[13].kind == ValueKind::Other);
  CHECK((v[14].kind == ValueKind::Column && v[14].text == "b"));
  // Locations point at the literal (at the minus sign of a folded negative number).
  const std::string sql = "SELECT * FROM t WHERE k = - 12";
  CHECK(facts(sql).predicates.at(0).values.at(0).location == static_cast<int>(sql.find('-')));
  CHECK(facts(sql).predicates.at(0).values.at(0).text == "-12");
}

TEST_CASE("joins: equalities from ON, USING and WHERE; outer joins; nullable sides") {
  CHECK(described("SELECT * FROM orders o JOIN items i ON o.tenant_id = i.tenant_id AND i.x = 1 "
                  "LEFT JOIN notes n ON n.tenant_id = o.tenant_id AND n.y = 2 "
                  "WHERE o.tenant_id = $1") ==
        "kind=Select query=Select writes=no returning=no complete=yes max_param=1\n"
        "scope 0 parent=-1 features=none non_table_from=no\n"
        "table 0 orders as o role=read scope=0\n"
        "table 1 items as i role=read scope=0\n"
        "table 2 notes as n role=read scope=0 nullable\n"
        "predicate t1.x = 1 usable\n"
        "predicate t2.y = 2 usable\n"  // restricts the nullable side's rows
        "predicate t0.tenant_id = $1 usable\n"
        "equality t0.tenant_id = t1.tenant_id\n"
        "equality t2.tenant_id = t0.tenant_id (right restricts left)\n");
  CHECK(described("SELECT * FROM a FULL JOIN b USING (k), c") ==
        "kind=Select query=Select writes=no returning=no complete=yes max_param=0\n"
        "scope 0 parent=-1 features=none non_table_from=no\n"
        "table 0 a role=read scope=0 nullable\n"
        "table 1 b role=read scope=0 nullable\n"
        "table 2 c role=read scope=0\n"
        "equality t0.k = t1.k (co-location only)\n");
  // An outer join's ON restricts nothing on its preserved side; RIGHT JOIN mirrors LEFT JOIN;
  // an unqualified column's side is unknown.
  CHECK(described("SELECT * FROM a RIGHT JOIN b ON a.k = b.k AND b.x = 1 AND a.y = 2 AND z = 3") ==
        "kind=Select query=Select writes=no returning=no complete=yes max_param=0\n"
        "scope 0 parent=-1 features=none non_table_from=no\n"
        "table 0 a role=read scope=0 nullable\n"
        "table 1 b role=read scope=0\n"
        "predicate t1.x = 1 unusable\n"
        "predicate t0.y = 2 usable\n"
        "predicate z@0 = 3 unusable\n"
        "equality t0.k = t1.k (right restricts left)\n");
  CHECK(described("SELECT * FROM a LEFT JOIN b USING (k)") ==
        "kind=Select query=Select writes=no returning=no complete=yes max_param=0\n"
        "scope 0 parent=-1 features=none non_table_from=no\n"
        "table 0 a role=read scope=0\n"
        "table 1 b role=read scope=0 nullable\n"
        "equality t0.k = t1.k (left restricts right)\n");
  // A column = column under OR is not an equality.
  CHECK(facts("SELECT * FROM a, b WHERE a.k = b.k OR a.j = b.j").equalities.empty());
}

TEST_CASE("subqueries, correlation, CTEs and set operations open scopes") {
  CHECK(described("SELECT * FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k) "
                  "AND a.id IN (SELECT id FROM c)") ==
        "kind=Select query=Select writes=no returning=no complete=yes max_param=0\n"
        "scope 0 parent=-1 features=none non_table_from=no\n"
        "scope 1 parent=0 features=none non_table_from=no\n"
        "scope 2 parent=0 features=none non_table_from=no\n"
        "table 0 a role=read scope=0\n"
        "table 1 b role=read scope=1\n"
        "table 2 c role=read scope=2\n"
        "equality t1.k = t0.k\n"
        // IN (SELECT ...) in the AND chain: written in both blocks.
        "equality t0.id = id@2\n"
        "equality id@2 = t0.id\n");
  // Not under OR or NOT, nor with a LIMIT in the subquery.
  CHECK(facts("SELECT * FROM a WHERE a.x = 1 OR a.id IN (SELECT id FROM c)").equalities.empty());
  CHECK(facts("SELECT * FROM a WHERE NOT a.id IN (SELECT id FROM c)").equalities.empty());
  CHECK(facts("SELECT * FROM a WHERE a.id IN (SELECT id FROM c LIMIT 2)").equalities.empty());
  CHECK(facts("SELECT * FROM a WHERE a.id <> ALL (SELECT id FROM c)").equalities.empty());
  CHECK(facts("SELECT * FROM a WHERE a.id IN (SELECT id + 1 FROM c)").equalities.empty());
  CHECK(facts("SELECT * FROM a WHERE a.id = ANY (SELECT id FROM c)").equalities.size() == 2);
  // A CTE reference is not a table; inside a non-recursive CTE its own name is the table.
  auto cte = facts(
      "WITH orders AS (SELECT * FROM orders WHERE k = 1) SELECT * FROM orders o "
      "WHERE o.x = 2");
  REQUIRE(cte.tables.size() == 1);
  CHECK(cte.tables[0].scope == 1);
  CHECK(cte.scopes[0].non_table_from);
  CHECK(cte.predicates.at(1).column.qualified);
  CHECK(cte.predicates.at(1).column.table == -1);  // o is the CTE, not a table
  // Subquery in FROM: its alias qualifies no table.
  auto sub = facts("SELECT * FROM (SELECT * FROM t) s WHERE s.k = 1");
  CHECK(sub.tables.at(0).scope == 1);
  CHECK(sub.predicates.at(0).column.table == -1);
  // Data-modifying CTE: a write.
  auto moved = facts("WITH m AS (DELETE FROM t WHERE k = 1 RETURNING *) SELECT * FROM m");
  CHECK(moved.writes);
  CHECK(moved.returning);
  CHECK(moved.tables.at(0).role == TableRole::Delete);
  auto set_op = facts("SELECT k FROM a UNION SELECT k FROM b ORDER BY 1");
  CHECK(set_op.scopes.at(0).features == (sw::parser::feature::kSetOp | sw::parser::feature::kOrderBy));
  CHECK(set_op.tables.size() == 2);
}

TEST_CASE("blocks that feed a FROM item: subqueries in FROM and CTEs read once") {
  CHECK(described("WITH t AS (SELECT k FROM a WHERE x > 1) SELECT count(*) FROM t") ==
        "kind=Select query=Select writes=no returning=no complete=yes max_param=0\n"
        "scope 0 parent=-1 features=aggregate non_table_from=yes\n"
        "scope 1 parent=0 features=none non_table_from=no feeds=0\n"
        "table 0 a role=read scope=1\n");
  auto nested =
      facts("SELECT * FROM (SELECT * FROM (SELECT k FROM a) i) o LEFT JOIN (SELECT k FROM b) n USING (k)");
  REQUIRE(nested.scopes.size() == 4);
  CHECK(nested.scopes[1].feeds == 0);  // o
  CHECK(nested.scopes[2].feeds == 1);  // i, inside o
  CHECK(nested.scopes[3].feeds == 0);  // n, on the nullable side
  CHECK(nested.scopes[3].feeds_nullable);
  CHECK_FALSE(nested.scopes[1].feeds_nullable);
  // A CTE read twice, a CTE read from an expression subquery, WITH RECURSIVE, a data-modifying
  // CTE, expression subqueries and set operation branches feed nothing.
  CHECK(facts("WITH t AS (SELECT k FROM a) SELECT * FROM t x JOIN t y USING (k)").scopes[1].feeds == -1);
  auto in_where = facts("WITH t AS (SELECT k FROM a) SELECT * FROM b WHERE k IN (SELECT k FROM t)");
  CHECK(in_where.scopes[1].feeds == 2);  // the IN subquery's block, which itself feeds nothing
  CHECK(in_where.scopes[2].feeds == -1);
  CHECK(facts("WITH RECURSIVE t AS (SELECT k FROM a) SELECT * FROM t").scopes[1].feeds == -1);
  CHECK(facts("WITH t AS (DELETE FROM a RETURNING k) SELECT * FROM t").scopes[1].feeds == -1);
  CHECK(facts("SELECT (SELECT max(k) FROM a)").scopes[1].feeds == -1);
  auto set_op = facts("SELECT * FROM (SELECT k FROM a UNION ALL SELECT k FROM b) u");
  CHECK(set_op.scopes[1].feeds == 0);
  CHECK(set_op.scopes[1].features == sw::parser::feature::kSetOp);
  CHECK(set_op.scopes[2].feeds == -1);
}

TEST_CASE("SELECT features that block a scatter concatenation") {
  namespace f = sw::parser::feature;
  auto features = [](const std::string& sql) { return facts(sql).scopes.at(0).features; };
  CHECK(features("SELECT * FROM t") == 0);
  CHECK(features("SELECT * FROM t ORDER BY 1") == f::kOrderBy);
  CHECK(features("SELECT * FROM t LIMIT 1") == f::kLimit);
  CHECK(features("SELECT * FROM t OFFSET 1") == f::kLimit);
  CHECK(features("SELECT * FROM t FETCH FIRST 3 ROWS ONLY") == f::kLimit);
  CHECK(features("SELECT DISTINCT a FROM t") == f::kDistinct);
  CHECK(features("SELECT DISTINCT ON (a) a FROM t") == f::kDistinct);
  CHECK(features("SELECT a FROM t GROUP BY a") == f::kGroupBy);
  CHECK(features("SELECT 1 FROM t HAVING true") == f::kHaving);
  CHECK(features("SELECT count(*) FROM t") == f::kAggregate);
  CHECK(features("SELECT sum(x) FROM t") == f::kAggregate);
  CHECK(features("SELECT my_agg(DISTINCT x) FROM t") == f::kAggregate);
  CHECK(features("SELECT my_agg(x ORDER BY y) FROM t") == f::kAggregate);
  CHECK(features("SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM t") == f::kAggregate);
  CHECK(features("SELECT row_number() OVER () FROM t") == f::kWindow);
  CHECK(features("SELECT sum(x) OVER w FROM t WINDOW w AS ()") == f::kWindow);
  CHECK(features("SELECT lower(x) FROM t") == 0);
  // Features of a subquery belong to its scope.
  auto nested = facts("SELECT * FROM t WHERE x > (SELECT max(x) FROM t)");
  CHECK(nested.scopes.at(0).features == 0);
  CHECK(nested.scopes.at(1).features == f::kAggregate);
}

TEST_CASE("INSERT: columns, VALUES rows, ON CONFLICT, RETURNING, INSERT ... SELECT") {
  CHECK(described("INSERT INTO orders AS o (tenant_id, id, note) VALUES ($1, 1, 'a'), (2, "
                  "DEFAULT, NULL) ON CONFLICT (tenant_id, id) DO UPDATE SET note = "
                  "excluded.note, tenant_id = o.tenant_id RETURNING id") ==
        "kind=Insert query=Insert writes=yes returning=yes complete=yes max_param=1\n"
        "scope 0 parent=-1 features=none non_table_from=no\n"
        "table 0 orders as o role=insert scope=0\n"
        "assignment t0.note = col:excluded.note\n"
        "assignment t0.tenant_id = col:o.tenant_id\n"
        "insert t0 columns=(tenant_id, id, note) rows=2 on_conflict=update | row ($1, 1, 'a') | "
        "row (2, ?, NULL)\n");
  auto select = facts("INSERT INTO t (k) SELECT k FROM u WHERE k = 1");
  CHECK(select.inserts.at(0).from_select);
  CHECK(select.tables.at(1).role == TableRole::Read);
  CHECK(facts("INSERT INTO t DEFAULT VALUES").inserts.at(0).default_values);
  CHECK(facts("INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING").inserts.at(0).on_conflict ==
        sw::parser::OnConflict::DoNothing);
  CHECK(facts("INSERT INTO t VALUES (1)").inserts.at(0).columns.empty());
}

TEST_CASE("INSERT ... SELECT: the SELECT's block and what each select-list item is") {
  CHECK(described("INSERT INTO t (k, v) SELECT s.k, v + 1 FROM s WHERE s.k = 3") ==
        "kind=Insert query=Insert writes=yes returning=no complete=yes max_param=0\n"
        "scope 0 parent=-1 features=none non_table_from=no\n"
        "scope 1 parent=0 features=none non_table_from=no\n"
        "table 0 t role=insert scope=0\n"
        "table 1 s role=read scope=1\n"
        "predicate t1.k = 3 usable\n"
        "insert t0 columns=(k, v) rows=0 from_select select@1 (t1.k, ?)\n");
  auto unqualified = facts("INSERT INTO t SELECT k, *, s.*, 5, $1 FROM s");
  const sw::parser::InsertFacts& insert = unqualified.inserts.at(0);
  CHECK(insert.select_scope == 1);
  REQUIRE(insert.select_values.size() == 5);
  CHECK(insert.select_columns[0].name == "k");
  CHECK(insert.select_columns[0].scope == 1);
  CHECK(insert.select_values[1].text == "*");
  CHECK(insert.select_values[2].text == "*");
  CHECK(insert.select_values[3].kind == sw::parser::ValueKind::Number);
  CHECK(insert.select_values[4].kind == sw::parser::ValueKind::Param);
  CHECK(facts("INSERT INTO t SELECT DISTINCT ON (v) k FROM s").inserts.at(0).select_distinct_on);
  CHECK_FALSE(facts("INSERT INTO t SELECT DISTINCT k FROM s").inserts.at(0).select_distinct_on);
  // A set operation or VALUES has no one select list.
  CHECK(facts("INSERT INTO t SELECT k FROM s UNION SELECT k FROM u").inserts.at(0).select_scope == -1);
  CHECK(facts("INSERT INTO t VALUES (1)").inserts.at(0).select_scope == -1);
}

TEST_CASE("UPDATE and DELETE: targets, FROM/USING, WHERE, assignments") {
  CHECK(described("UPDATE orders SET total = $2, (a, b) = (1, 2) FROM items i "
                  "WHERE orders.tenant_id = i.tenant_id AND i.tenant_id = $1") ==
        "kind=Update query=Update writes=yes returning=no complete=yes max_param=2\n"
        "scope 0 parent=-1 features=none non_table_from=no\n"
        "table 0 orders role=update scope=0\n"
        "table 1 items as i role=read scope=0\n"
        "predicate t1.tenant_id = $1 usable\n"
        "equality t0.tenant_id = t1.tenant_id\n"
        "assignment t0.total = $2\n"
        "assignment t0.a = ?\n"
        "assignment t0.b = ?\n");
  CHECK(described("DELETE FROM orders o USING items i WHERE o.k = i.k RETURNING *") ==
        "kind=Delete query=Delete writes=yes returning=yes complete=yes max_param=0\n"
        "scope 0 parent=-1 features=none non_table_from=no\n"
        "table 0 orders as o role=delete scope=0\n"
        "table 1 items as i role=read scope=0\n"
        "equality t0.k = t1.k\n");
}

TEST_CASE("DDL and utility statements name their tables") {
  auto tables = [](const std::string& sql) {
    std::string out;
    for (const auto& t : facts(sql).tables) {
      if (!out.empty()) out += ' ';
      if (!t.schema.empty()) out += t.schema + '.';
      out += t.name + ':' + sw::parser::table_role_name(t.role);
    }
    return out;
  };
  CHECK(tables("CREATE TABLE s.t (a int REFERENCES o)") == "s.t:create");
  CHECK(tables("CREATE TABLE p PARTITION OF o FOR VALUES IN (1)") == "p:create o:ddl");
  CHECK(tables("CREATE TABLE x AS SELECT * FROM y") == "x:create y:read");
  CHECK(tables("SELECT * INTO x FROM y") == "y:read x:create");
  CHECK(tables("CREATE VIEW v AS SELECT * FROM y") == "v:create y:read");
  CHECK(tables("ALTER TABLE t ADD FOREIGN KEY (a) REFERENCES o") == "t:ddl");
  CHECK(tables("DROP TABLE a, s.b") == "a:ddl s.b:ddl");
  CHECK(tables("DROP INDEX i") == "");
  CHECK(tables("TRUNCATE a, b") == "a:ddl b:ddl");
  CHECK(tables("CREATE INDEX ON t (x)") == "t:ddl");
  CHECK(tables("COMMENT ON COLUMN s.t.c IS 'x'") == "s.t:ddl");
  CHECK(tables("COMMENT ON TABLE t IS 'x'") == "t:ddl");
  CHECK(tables("GRANT SELECT ON t, u TO r") == "t:ddl u:ddl");
  CHECK(tables("ALTER TABLE t RENAME TO u") == "t:ddl");
  CHECK(tables("CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW EXECUTE FUNCTION f()") == "t:ddl");
  CHECK(tables("VACUUM a, b") == "a:maintenance b:maintenance");
  CHECK(tables("REINDEX TABLE t") == "t:maintenance");
  CHECK(tables("LOCK t") == "t:lock");
  CHECK(tables("COPY t FROM STDIN") == "t:copy_from");
  CHECK(tables("COPY t TO STDOUT") == "t:copy_to");
  CHECK(facts("COPY t FROM STDIN").writes);
  CHECK(facts("COPY (SELECT * FROM t) TO STDOUT").query_kind == StatementKind::Select);
  auto explain = facts("EXPLAIN ANALYZE UPDATE t SET a = 1 WHERE k = 2");
  CHECK(explain.kind == StatementKind::Utility);
  CHECK(explain.query_kind == StatementKind::Update);
  CHECK(explain.node_type == "ExplainStmt");
  CHECK(explain.writes);
  CHECK(facts("SHOW search_path").node_type == "VariableShowStmt");
}

TEST_CASE("statements nested deeper than the walk follows are incomplete, tables still listed") {
  std::string sql = "SELECT * FROM deep_a WHERE k = ";
  for (int i = 0; i < 300; ++i) sql += "(1 + ";
  sql += "(SELECT k FROM deep_b)";
  for (int i = 0; i < 300; ++i) sql += ")";
  auto deep = facts(sql);
  CHECK_FALSE(deep.complete);
  REQUIRE(deep.tables.size() == 2);
  CHECK(deep.tables[0].name == "deep_a");
  CHECK(deep.tables[1].name == "deep_b");
  CHECK(deep.predicates.empty());
  CHECK(facts("SELECT * FROM t WHERE k = 1").complete);
}

TEST_CASE("COPY FROM STDIN: the column list and every option as written, old syntax included") {
  auto plain = facts("COPY t FROM STDIN");
  CHECK(plain.copy_from_client);
  CHECK(plain.copy_columns.empty());
  CHECK(plain.copy_options.empty());
  auto full = facts(
      "COPY s.t (a, \"B\") FROM STDIN WITH (FORMAT csv, HEADER match, DELIMITER ';', NULL 'nil', QUOTE '''', "
      "ESCAPE '\\', FORCE_NOT_NULL (a), FORCE_NULL *, FREEZE false)");
  CHECK(full.copy_from_client);
  CHECK(full.copy_columns == std::vector<std::string>{"a", "B"});
  REQUIRE(full.copy_options.size() == 9);
  CHECK((full.copy_options[0].name == "format" && full.copy_options[0].value == "csv"));
  CHECK((full.copy_options[1].name == "header" && full.copy_options[1].value == "match"));
  CHECK((full.copy_options[2].name == "delimiter" && full.copy_options[2].value == ";"));
  CHECK((full.copy_options[3].name == "null" && full.copy_options[3].value == "nil"));
  CHECK((full.copy_options[4].name == "quote" && full.copy_options[4].value == "'"));
  CHECK((full.copy_options[5].name == "escape" && full.copy_options[5].value == "\\"));
  CHECK(full.copy_options[6].columns == std::vector<std::string>{"a"});
  CHECK((full.copy_options[7].name == "force_null" && full.copy_options[7].all_columns));
  CHECK((full.copy_options[8].has_value && full.copy_options[8].value == "false"));
  auto old = facts("COPY t FROM STDIN WITH CSV HEADER DELIMITER AS '|'");
  REQUIRE(old.copy_options.size() == 3);
  CHECK((old.copy_options[0].name == "format" && old.copy_options[0].value == "csv"));
  CHECK((old.copy_options[1].name == "header" && old.copy_options[1].value == "true"));
  CHECK(old.copy_options[2].value == "|");
  CHECK(facts("COPY t FROM STDIN (FORMAT binary)").copy_options[0].value == "binary");
  CHECK(facts("COPY t FROM STDIN BINARY").copy_options[0].value == "binary");
  CHECK_FALSE(facts("COPY t FROM '/tmp/x'").copy_from_client);
  CHECK_FALSE(facts("COPY t FROM PROGRAM 'cat'").copy_from_client);
  CHECK_FALSE(facts("COPY t TO STDOUT").copy_from_client);
}

TEST_CASE("SELECT shape: where each output's and ORDER BY item's collation comes from") {
  auto shape =
      facts(R"(SELECT name COLLATE "de-x-icu" AS n, max(t.nick COLLATE pg_catalog."C"), lower(a) || b::text,
                              min(upper(c COLLATE "POSIX")), (SELECT x FROM u) FROM t ORDER BY n, id, name COLLATE "C")")
          .select;
  REQUIRE(shape.outputs.size() == 5);
  CHECK(shape.outputs[0].collation.explicit_name == "de-x-icu");
  CHECK(shape.outputs[1].collation.explicit_name == "C");  // min/max: the argument's
  CHECK(shape.outputs[2].collation.explicit_name.empty());
  CHECK(shape.outputs[2].collation.columns == std::vector<std::string>{"a", "b"});
  CHECK(shape.outputs[3].collation.nested == std::vector<std::string>{"POSIX"});
  CHECK(shape.outputs[3].collation.columns == std::vector<std::string>{"c"});
  CHECK_FALSE(shape.outputs[3].collation.opaque);
  CHECK(shape.outputs[4].collation.opaque);  // a subquery
  REQUIRE(shape.order_by.size() == 3);
  CHECK(shape.order_by[1].collation.columns == std::vector<std::string>{"id"});
  CHECK(shape.order_by[2].collation.explicit_name == "C");
  CHECK(facts("SELECT t.* FROM t ORDER BY 1").select.outputs[0].collation.opaque);
}

TEST_CASE("SELECT shape: the text of ORDER BY expressions that are neither output columns nor names") {
  auto expressions = [](const std::string& sql) {
    std::vector<std::string> out;
    for (const auto& item : facts(sql).select.order_by) out.push_back(item.expression);
    return out;
  };
  CHECK(expressions("SELECT id FROM t ORDER BY lower(name) DESC, (a + b) * 2, a+b NULLS FIRST, x::text, "
                    "'it''s, (' || y USING <, z, 1 LIMIT 3") ==
        std::vector<std::string>{"lower(name)", "(a + b) * 2", "a+b", "x::text", "'it''s, (' || y", "", ""});
  CHECK(expressions("(SELECT id FROM t ORDER BY \"Desc\" + 1, descr - $1)") ==
        std::vector<std::string>{"\"Desc\" + 1", "descr - $1"});
  CHECK(expressions("SELECT id FROM t ORDER BY -a FOR UPDATE") == std::vector<std::string>{"-a"});
  // Not cut out: subqueries, aggregates, comments, dollar quotes, E'' strings.
  CHECK(expressions("SELECT id FROM t ORDER BY (SELECT 1) + a, count(*), a + 1 -- c\n") ==
        std::vector<std::string>{"", "", ""});
  CHECK(expressions("SELECT id FROM t ORDER BY a || $$x$$, a || E'\\''") == std::vector<std::string>{"", ""});
}

TEST_CASE("SELECT shape: HAVING over output columns and constants, with its text span") {
  const std::string sql =
      "SELECT grp, count(*), avg(n) FROM t GROUP BY grp HAVING (count(*) > 5 AND NOT 2 >= grp) OR avg(n) <> "
      "'1.5' ORDER BY grp";
  const StatementFacts f = facts(sql);
  REQUIRE(f.select.having.size() == 1);
  CHECK(f.select.unmergeable.empty());
  const auto& root = f.select.having[0];
  CHECK(root.kind == sw::parser::HavingTerm::Kind::Or);
  REQUIRE(root.children.size() == 2);
  const auto& both = root.children[0];
  CHECK(both.kind == sw::parser::HavingTerm::Kind::And);
  REQUIRE(both.children.size() == 2);
  CHECK(both.children[0].output == 1);
  CHECK(both.children[0].op == ">");
  CHECK(both.children[0].constant.text == "5");
  REQUIRE(both.children[1].children.size() == 1);
  CHECK(both.children[1].children[0].output == 0);
  CHECK(both.children[1].children[0].op == "<=");  // 2 >= grp: grp <= 2
  CHECK(root.children[1].output == 2);
  CHECK(root.children[1].constant.text == "1.5");
  CHECK(sql.substr(static_cast<size_t>(f.select.having_begin),
                   static_cast<size_t>(f.select.having_end - f.select.having_begin)) ==
        "HAVING (count(*) > 5 AND NOT 2 >= grp) OR avg(n) <> '1.5'");
  // A parameter in place of a constant (either side); $n against $m or cast is not evaluable.
  const auto params =
      facts("SELECT grp, count(*) FROM t GROUP BY grp HAVING count(*) > $1 AND $2 <= grp").select;
  REQUIRE(params.having.size() == 1);
  REQUIRE(params.having[0].children.size() == 2);
  CHECK(params.having[0].children[0].constant.kind == sw::parser::ValueKind::Param);
  CHECK(params.having[0].children[0].constant.param == 1);
  CHECK(params.having[0].children[1].output == 0);
  CHECK(params.having[0].children[1].op == ">=");
  CHECK(params.having[0].children[1].constant.param == 2);
  // An aggregate not selected: a hidden output past the select list, its call text kept.
  const auto hidden = facts("SELECT grp FROM t GROUP BY grp HAVING count(*) > 5 AND avg(v) < 2").select;
  REQUIRE(hidden.having.size() == 1);
  CHECK(hidden.having[0].children.at(0).output == 1);
  CHECK(hidden.having[0].children.at(1).output == 2);
  REQUIRE(hidden.having_aggregates.size() == 2);
  CHECK(hidden.having_aggregates[0].call_text == "count(*)");
  CHECK(hidden.having_aggregates[1].aggregate == sw::parser::AggregateCall::Avg);
  CHECK(hidden.having_aggregates[1].call_text == "avg(v)");
  // An expression over aggregates: its aggregate and then the expression are hidden outputs.
  auto expression = facts("SELECT grp FROM t GROUP BY grp HAVING count(*) + 1 > 5").select;
  REQUIRE(expression.having.size() == 1);
  REQUIRE(expression.having_aggregates.size() == 2);
  CHECK(expression.having.front().output == 2);
  REQUIRE(expression.having_aggregates[1].expression);
  CHECK(expression.having_aggregates[1].expression->kind == sw::parser::AggregateExpression::Kind::Add);
  CHECK(expression.having_aggregates[1].expression->args.at(0).output == 1);
  // CASE over aggregates: (condition, result) pairs then ELSE (NULL when missing); a simple
  // CASE's conditions are `operand = value`; string literals as results.
  using Kind = sw::parser::AggregateExpression::Kind;
  auto searched = facts("SELECT CASE WHEN sum(v) > 1 AND NOT count(*) IS NULL THEN 'big' END FROM t").select;
  REQUIRE(searched.outputs.at(0).expression);
  const auto& ce = *searched.outputs[0].expression;
  CHECK(ce.kind == Kind::Case);
  REQUIRE(ce.args.size() == 3);
  CHECK(ce.args[0].kind == Kind::And);
  CHECK(ce.args[0].args.at(1).kind == Kind::Not);
  CHECK(ce.args[0].args.at(1).args.at(0).kind == Kind::IsNull);
  CHECK(ce.args[1].kind == Kind::Text);
  CHECK(ce.args[1].constant.text == "big");
  CHECK(ce.args[2].constant.kind == sw::parser::ValueKind::Null);
  auto simple = facts("SELECT CASE count(*) WHEN 0 THEN NULL ELSE sum(v) / count(*) END FROM t").select;
  REQUIRE(simple.outputs.at(0).expression);
  CHECK(simple.outputs[0].expression->args.at(0).kind == Kind::Equal);
  CHECK(simple.outputs[0].expression->args.at(2).kind == Kind::Divide);
  // A FILTERed aggregate not selected: hidden, its FILTER with it.
  auto filtered = facts("SELECT grp FROM t GROUP BY grp HAVING count(*) FILTER (WHERE v > 1) > 5").select;
  REQUIRE(filtered.having_aggregates.size() == 1);
  CHECK(filtered.having_aggregates[0].call_text == "count(*) FILTER (WHERE v > 1)");
  // Not evaluable by the proxy: an expression over aggregates it does not compute, a function of a
  // column, parameters compared with each other or cast.
  for (const char* other : {"SELECT grp FROM t GROUP BY grp HAVING count(*) ^ 2 > 0",
                            "SELECT grp, count(*) FROM t GROUP BY grp HAVING $1 = $2",
                            "SELECT grp, count(*) FROM t GROUP BY grp HAVING count(*) > $1::int",
                            "SELECT grp, count(*) FROM t GROUP BY grp HAVING count(*) > abs(grp)",
                            "SELECT grp, count(*) FROM t GROUP BY grp HAVING 1 = 1"}) {
    CHECK_MESSAGE(facts(other).select.having.empty(), other);
    CHECK_MESSAGE(facts(other).select.unmergeable == "HAVING", other);
    CHECK_MESSAGE(facts(other).select.having_aggregates.empty(), other);
  }
}
