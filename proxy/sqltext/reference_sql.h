// The SQL shardwire runs on reference tables (docs/architecture.md §6.4, "Reference tables"):
// the digest that VERIFY REFERENCE, `shardwire init` and the mover compare between shards, and
// the statements init fills a shard's copy with. Pure string builders, no I/O.
#pragma once

#include <string>

namespace sw::sqltext {

// $1 = the table (regclass text): its resolved name ("app.plans"), NULL when it does not exist.
inline constexpr const char* kResolveTableSql = "SELECT to_regclass($1)::text";

// $1 = the table: every non-dropped column, quoted, by name (bytewise), joined by ", " -- the
// digest's row image, the same whatever the attribute order on each shard.
inline constexpr const char* kColumnsByNameSql =
    "SELECT string_agg(quote_ident(attname), ', ' ORDER BY attname) FROM pg_attribute "
    "WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped";

// $1 = the table: the columns a copy writes (not generated ones), by name.
inline constexpr const char* kWritableColumnsSql =
    "SELECT string_agg(quote_ident(attname), ', ' ORDER BY attname) FROM pg_attribute "
    "WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped AND attgenerated = ''";

// One row: count(*) and the SUM (numeric, as text; "0" when empty) of
//   hashtextextended('<configured name>:' || ROW(<columns by name>)::text, 0)
// over the whole table -- the bucket verifier's row hash (mover/verifier.h), order-independent,
// computed by the shard so no row crosses the network. `table` is the resolved name.
std::string reference_digest_sql(const std::string& configured_name, const std::string& table,
                                 const std::string& columns);

// The temporary table a copy is streamed into, dropped at commit.
inline constexpr const char* kReferenceRowsTable = "sw_reference_rows";
std::string reference_staging_sql(const std::string& table);    // CREATE TEMP TABLE ... (LIKE table)
std::string reference_copy_in_sql(const std::string& columns);  // COPY staging FROM STDIN
std::string reference_copy_out_sql(const std::string& table,
                                   const std::string& columns);  // COPY (SELECT) TO STDOUT
// Inserts the staged rows the table lacks (EXCEPT ALL: a row the source holds twice is there twice).
std::string reference_fill_sql(const std::string& table, const std::string& columns);

}  // namespace sw::sqltext
