#include "sqltext/reference_sql.h"

#include "sqltext/catalog_sql.h"

namespace sw::sqltext {

std::string reference_digest_sql(const std::string& configured_name, const std::string& table,
                                 const std::string& columns) {
  return "SELECT count(*), coalesce(sum(hashtextextended(" + quote_literal(configured_name + ":") +
         " || ROW(" + columns + ")::text, 0)), 0)::text FROM " + table;
}

std::string reference_staging_sql(const std::string& table) {
  return std::string("CREATE TEMP TABLE ") + kReferenceRowsTable + " (LIKE " + table + ") ON COMMIT DROP";
}

std::string reference_copy_in_sql(const std::string& columns) {
  return std::string("COPY ") + kReferenceRowsTable + " (" + columns + ") FROM STDIN";
}

std::string reference_copy_out_sql(const std::string& table, const std::string& columns) {
  return "COPY (SELECT " + columns + " FROM " + table + ") TO STDOUT";
}

std::string reference_fill_sql(const std::string& table, const std::string& columns) {
  return "INSERT INTO " + table + " (" + columns + ") SELECT " + columns + " FROM " + kReferenceRowsTable +
         " EXCEPT ALL SELECT " + columns + " FROM " + table;
}

}  // namespace sw::sqltext
