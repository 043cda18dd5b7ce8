#include "parser/transaction_gid.h"

#include "parser/sql_lexer.h"

namespace sw::parser {

std::optional<std::string> plain_transaction_gid(std::string_view sql) {
  detail::NormalizedSql normalized;
  if (!detail::normalize_sql(sql, normalized) || normalized.slots.size() != 1 ||
      normalized.slots.front().kind != detail::SlotKind::String)
    return std::nullopt;
  // An E'' / B'' / X'' / N'' string or a dollar quote stays verbatim in the key.
  if (normalized.key.find_first_of("'$") != std::string::npos) return std::nullopt;
  std::string gid = detail::slot_value(sql, normalized.slots.front());
  if (gid.find('\\') != std::string::npos) return std::nullopt;
  return gid;
}

}  // namespace sw::parser
