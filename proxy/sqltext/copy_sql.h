// The SQL a COPY FROM STDIN into a sharded table runs besides the client's statement
// (docs/architecture.md §5.10). Pure string builders.
#pragma once

#include <string>

namespace sw::sqltext {

// One row, one column: the 0-based position of column `key` among the columns a COPY without a
// column list reads (every column of the table in attnum order, except dropped and generated
// ones) of table `schema`.`table` (`schema` empty: found through search_path, as the COPY finds
// it). No row when the table has no such column (or it is generated); an error (42P01) when
// there is no such table.
std::string copy_key_position_sql(const std::string& schema, const std::string& table,
                                  const std::string& key);

}  // namespace sw::sqltext
