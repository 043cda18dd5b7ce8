// Merged reads that order or group text, against the same rows in one plain PostgreSQL database:
// the merge compares bytes, so text ordered COLLATE "C" / "POSIX" merges as the reference orders
// it, while a compared column of another collation (its COLLATE, the table column it is, or what
// its expression reads; here und-x-icu) is refused with 0A000 naming it, in both protocols.
// Only the columns the merge compares count: other columns of the table do not, and grouping
// needs equality only, which bytes give under any deterministic collation.
#include "it_test.h"

#include <iterator>
#include <string>
#include <utility>

#include "harness/reference_compare.h"
#include "harness/sharded_fixture.h"

using namespace it;

namespace {

const char* const kPlain =
    "CREATE TABLE m (id bigint NOT NULL, tenant_id bigint NOT NULL, t text, PRIMARY KEY (tenant_id, id))";

// Orders that differ between byte order and und-x-icu: case, accents, blanks, punctuation.
const char* const kTexts[] = {"apple",
                              "Apple",
                              "APPLE",
                              "\xc3\xa9"
                              "clair",
                              "\xc3\x89"
                              "clair",
                              "zebra",
                              "Zebra",
                              "a b",
                              "apple ",
                              "_x",
                              "0",
                              "~",
                              ""};

}  // namespace

TEST_SUITE("merged_collation") {
  TEST_CASE("text merges only in byte order: COLLATE \"C\" merges, other collations are refused") {
    PROXY_ONLY();
    const char* const create =
        "CREATE TABLE mc (id bigint NOT NULL, tenant_id bigint NOT NULL, name text COLLATE \"und-x-icu\", "
        "PRIMARY KEY (tenant_id, id))";
    ShardedOptions options;
    options.tables_yaml +=
        "    - name: mc\n      key: tenant_id\n      type: bigint\n"
        "    - name: m\n      key: tenant_id\n      type: bigint\n";
    ShardedFixture f(options);
    PgConn c = f.client();
    REQUIRE_OK(c.exec(create));
    REQUIRE_OK(c.exec(kPlain));
    PgConn ref = reference_database(f, "swcollate_ref", create);
    REQUIRE_OK(ref.exec(kPlain));
    for (int i = 1; i <= 60; ++i) {
      std::string values = "(";
      values += std::to_string(i);
      values += ", ";
      values += std::to_string(i % 20 - 5);
      values += ", '";
      values += kTexts[static_cast<size_t>(i) % std::size(kTexts)];
      values += "')";
      for (const char* insert :
           {"INSERT INTO mc (id, tenant_id, name) VALUES ", "INSERT INTO m (id, tenant_id, t) VALUES "}) {
        const std::string sql = insert + values;
        REQUIRE_OK(c.exec(sql));
        REQUIRE_OK(ref.exec(sql));
      }
    }
    // The rows tell the orders apart: merging und-x-icu text by bytes would be wrong.
    CHECK(ref.exec("SELECT string_agg(name, '|' ORDER BY name, id) FROM mc").value() !=
          ref.exec("SELECT string_agg(name, '|' ORDER BY name COLLATE \"C\", id) FROM mc").value());
    // Byte order asked for explicitly, and merges that compare no text of mc: the reference's rows.
    for (const char* sql : {"SELECT t COLLATE \"C\" AS c, tenant_id, id FROM m ORDER BY 1 DESC, 2, 3",
                            "SELECT t COLLATE \"POSIX\" AS c, count(*) FROM m GROUP BY 1 ORDER BY 1",
                            "SELECT tenant_id, id FROM m ORDER BY t COLLATE \"C\" DESC, 1, 2",
                            "SELECT tenant_id, id, name FROM mc ORDER BY id DESC LIMIT 7",
                            "SELECT count(*), max(id) FROM mc"}) {
      const std::string diff = compare_results(ref.exec(sql), c.exec(sql), true);
      CHECK_MESSAGE(diff.empty(), sql << "\n  " << diff << "\n" << f.log_tail(5));
    }
    // Text of a column whose collation is not byte order, or a COLLATE that is not: refused.
    const std::pair<const char*, const char*> refused[] = {
        {"SELECT name, id FROM mc ORDER BY 1, 2", "mc.name (und-x-icu)"},
        {"SELECT min(name) FROM mc", "mc.name (und-x-icu)"},
        {"SELECT id FROM m ORDER BY t COLLATE \"und-x-icu\", id", "COLLATE \"und-x-icu\""},
        {"SELECT DISTINCT name FROM mc ORDER BY 1", "mc.name (und-x-icu)"},
        {"SELECT t COLLATE \"und-x-icu\" AS u, count(*) FROM m GROUP BY 1 ORDER BY 1",
         "COLLATE \"und-x-icu\""},
    };
    for (const auto& entry : refused) {
      const auto& sql = entry.first;  // not a structured binding: doctest's INFO captures it
      const auto& says = entry.second;
      PgResult r = c.exec(sql);
      INFO(sql << " -> " << r.describe());
      CHECK(r.sqlstate() == "0A000");
      CHECK(r.error().find(says) != std::string::npos);
      CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
      CHECK(ref.exec(sql).ok());
    }
    // The same refusal in the extended protocol, and the connection goes on.
    PgResult extended = c.exec_params("SELECT name FROM mc WHERE id > $1 ORDER BY 1", {"0"});
    CHECK(extended.sqlstate() == "0A000");
    CHECK(c.exec_params("SELECT count(*) FROM mc WHERE id > $1", {"0"}).value() == "60");
  }

  TEST_CASE("only the compared columns' collations count: COLLATE \"C\" keys merge beside ICU columns") {
    PROXY_ONLY();
    const char* const collation =
        "CREATE COLLATION nd_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)";
    const char* const create =
        "CREATE TABLE mk (id bigint NOT NULL, tenant_id bigint NOT NULL, c text COLLATE \"C\", name text "
        "COLLATE \"und-x-icu\", nd text COLLATE nd_ci, PRIMARY KEY (tenant_id, id))";
    ShardedOptions options;
    options.tables_yaml += "    - name: mk\n      key: tenant_id\n      type: bigint\n";
    ShardedFixture f(options);
    for (int s = 0; s < f.setup.shards(); ++s) REQUIRE_OK(f.setup.shard(s).exec(collation));
    PgConn c = f.client();
    REQUIRE_OK(c.exec(create));
    PgConn ref = reference_database(f, "swcollate_keys", collation);
    REQUIRE_OK(ref.exec(create));
    const size_t texts = std::size(kTexts);
    for (int i = 1; i <= 60; ++i) {
      std::string sql = "INSERT INTO mk (id, tenant_id, c, name, nd) VALUES (";
      sql += std::to_string(i) + ", " + std::to_string(i % 20 - 5);
      for (size_t pick : {static_cast<size_t>(i) % texts, static_cast<size_t>(i) % texts,
                          static_cast<size_t>(i * 7) % texts}) {
        sql += ", '";
        sql += kTexts[pick];
        sql += "'";
      }
      sql += ")";
      REQUIRE_OK(c.exec(sql));
      REQUIRE_OK(ref.exec(sql));
    }
    // Byte order and und-x-icu order differ; byte equality and nd_ci equality differ.
    CHECK(ref.exec("SELECT string_agg(name, '|' ORDER BY name, id) FROM mk").value() !=
          ref.exec("SELECT string_agg(name, '|' ORDER BY name COLLATE \"C\", id) FROM mk").value());
    CHECK(ref.exec("SELECT count(DISTINCT nd) FROM mk").value() !=
          ref.exec("SELECT count(DISTINCT nd COLLATE \"C\") FROM mk").value());
    const char* const ordered[] = {
        "SELECT id, name FROM mk ORDER BY id DESC",
        "SELECT id, name FROM mk ORDER BY name COLLATE \"C\", id",
        "SELECT name COLLATE \"C\" AS n, id, nd FROM mk ORDER BY 1 DESC, 2",
        "SELECT c, name, id FROM mk ORDER BY c, id LIMIT 20",
        "SELECT lower(c) AS l, id FROM mk ORDER BY 1, 2",
        "SELECT max(name COLLATE \"C\"), min(c), max(upper(c)) FROM mk",
        "SELECT name COLLATE \"C\" AS n, count(*), min(c) FROM mk GROUP BY 1 ORDER BY 1",
        // A derived table's plain column: the shards' RowDescription names mk.c as its origin.
        "SELECT n, id FROM mk CROSS JOIN LATERAL (SELECT c AS n) s ORDER BY 1, 2",
    };
    for (const char* sql : ordered) {
      const std::string diff = compare_results(ref.exec(sql), c.exec(sql), true);
      CHECK_MESSAGE(diff.empty(), sql << "\n  " << diff << "\n" << f.log_tail(5));
    }
    // Equality only, under the deterministic und-x-icu: the same groups as the reference's.
    for (const char* sql : {"SELECT name, count(*), max(id) FROM mk GROUP BY name",
                            "SELECT DISTINCT name FROM mk", "SELECT DISTINCT name, c FROM mk",
                            "SELECT count(DISTINCT name), count(DISTINCT nd COLLATE \"C\") FROM mk"}) {
      const std::string diff = compare_results(ref.exec(sql), c.exec(sql), false);
      CHECK_MESSAGE(diff.empty(), sql << "\n  " << diff << "\n" << f.log_tail(5));
    }
    const std::string extended_sql =
        "SELECT id, name FROM mk WHERE id > $1 ORDER BY name COLLATE \"C\" DESC, id";
    const std::string extended_diff =
        compare_results(ref.exec_params(extended_sql, {"3"}), c.exec_params(extended_sql, {"3"}), true);
    CHECK_MESSAGE(extended_diff.empty(), extended_diff);
    const std::pair<const char*, const char*> refused[] = {
        {"SELECT id, name FROM mk ORDER BY name, id", "mk.name (und-x-icu)"},
        {"SELECT id FROM mk ORDER BY name DESC", "mk.name (und-x-icu)"},
        {"SELECT min(name) FROM mk", "mk.name (und-x-icu)"},
        {"SELECT max(lower(name)) FROM mk", "mk.name (und-x-icu)"},
        {"SELECT name, count(*) FROM mk GROUP BY name ORDER BY name", "mk.name (und-x-icu)"},
        {"SELECT name, count(*) FROM mk GROUP BY name HAVING name > 'b'", "mk.name (und-x-icu)"},
        {"SELECT nd, count(*) FROM mk GROUP BY nd", "mk.nd (nd_ci)"},
        {"SELECT DISTINCT nd FROM mk", "mk.nd (nd_ci)"},
        {"SELECT count(DISTINCT nd) FROM mk", "mk.nd (nd_ci)"},
        {"SELECT nd COLLATE nd_ci AS x, count(*) FROM mk GROUP BY 1", "COLLATE \"nd_ci\""},
        // Computed in a derived table: its collation cannot be told from the statement.
        {"SELECT n, id FROM mk CROSS JOIN LATERAL (SELECT lower(c) AS n) s ORDER BY 1, 2", "cannot tell"},
    };
    for (const auto& entry : refused) {
      const auto& sql = entry.first;  // not a structured binding: doctest's INFO captures it
      const auto& says = entry.second;
      PgResult r = c.exec(sql);
      INFO(sql << " -> " << r.describe());
      CHECK(r.sqlstate() == "0A000");
      CHECK(r.error().find(says) != std::string::npos);
      CHECK(r.error().find("COLLATE \"C\"") != std::string::npos);
      CHECK(ref.exec(sql).ok());
    }
  }
}
