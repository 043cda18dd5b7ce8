#include "sqltext/copy_sql.h"

#include "sqltext/catalog_sql.h"

namespace sw::sqltext {

std::string copy_key_position_sql(const std::string& schema, const std::string& table,
                                  const std::string& key) {
  const std::string relation =
      (schema.empty() ? std::string() : quote_identifier(schema) + ".") + quote_identifier(table);
  return "SELECT (SELECT count(*) FROM pg_catalog.pg_attribute c WHERE c.attrelid = k.attrelid AND c.attnum "
         "> 0 "
         "AND NOT c.attisdropped AND c.attgenerated = '' AND c.attnum < k.attnum) "
         "FROM pg_catalog.pg_attribute k WHERE k.attrelid = " +
         quote_literal(relation) + "::pg_catalog.regclass AND k.attname = " + quote_literal(key) +
         " AND NOT k.attisdropped AND k.attgenerated = ''";
}

}  // namespace sw::sqltext
