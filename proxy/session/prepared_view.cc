#include "session/prepared_view.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <vector>

#include "sqltext/catalog_sql.h"

namespace sw::session {
namespace {

constexpr uint32_t kUnknownOid = 705;  // pg_type "unknown": a type no server resolved yet

// The columns of the VALUES list, typed by its first row (all NULL, filtered out): the client's
// name, the text, when, the parameter types when known exactly, as declared, from_sql, the name a
// server holds it under (NULL: none).
constexpr const char* kHead =
    "SELECT v.name, v.statement, v.prepare_time, "
    "COALESCE(v.parameter_types, s.parameter_types, v.declared) AS parameter_types, v.from_sql, "
    "COALESCE(s.generic_plans, 0) AS generic_plans, COALESCE(s.custom_plans, 0) AS custom_plans "
    "FROM (VALUES (NULL::pg_catalog.text, NULL::pg_catalog.text, NULL::pg_catalog.timestamptz, "
    "NULL::pg_catalog.regtype[], NULL::pg_catalog.regtype[], NULL::pg_catalog.bool, NULL::pg_catalog.text)";
constexpr const char* kTail =
    ") AS v(name, statement, prepare_time, parameter_types, declared, from_sql, server_name) "
    "LEFT JOIN pg_catalog.pg_prepared_statements s ON s.name = v.server_name WHERE v.name IS NOT NULL";

std::string literal(const std::string& text) { return sqltext::quote_literal(text); }

// '{23,25}'::oid[]::regtype[]; a 0 (left to the server) as `unknown`.
std::string oid_types(const std::vector<uint32_t>& oids) {
  std::string out = "'{";
  for (size_t i = 0; i < oids.size(); ++i) {
    if (i != 0) out += ',';
    out += std::to_string(oids[i] == 0 ? kUnknownOid : oids[i]);
  }
  return out + "}'::pg_catalog.oid[]::pg_catalog.regtype[]";
}

// The types a PREPARE declared, as written, resolved by the server (NULL for one it cannot).
std::string named_types(const std::vector<std::string>& names) {
  if (names.empty()) return "'{}'::pg_catalog.regtype[]";
  std::string out = "ARRAY[";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i != 0) out += ',';
    out += "pg_catalog.to_regtype(" + literal(names[i]) + ")";
  }
  return out + "]::pg_catalog.regtype[]";
}

void append_row(std::string& out, const std::string& name, const std::string& text, int64_t at,
                const std::string& exact_types, const std::string& declared, bool from_sql,
                const std::string& server_name) {
  out += ",(" + literal(name) + "," + literal(text) + ",'" + utc_timestamp_text(at) + "'," + exact_types +
         "," + declared + (from_sql ? ",true," : ",false,") + server_name + ")";
}

}  // namespace

bool contains_ignoring_case(std::string_view text, std::string_view lower_word) {
  auto it = std::search(text.begin(), text.end(), lower_word.begin(), lower_word.end(),
                        [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
  return it != text.end();
}

std::string utc_timestamp_text(int64_t micros) {
  int64_t seconds = micros / 1000000;
  int64_t fraction = micros % 1000000;
  if (fraction < 0) {
    fraction += 1000000;
    --seconds;
  }
  const auto time = static_cast<std::time_t>(seconds);
  std::tm utc{};
  gmtime_r(&time, &utc);
  char out[48];
  std::snprintf(out, sizeof out, "%04d-%02d-%02d %02d:%02d:%02d.%06lld+00", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<long long>(fraction));
  return out;
}

std::string prepared_statements_subquery(const ClientStatements& protocol, const SqlStatements& sql,
                                         bool servers_hold_sql) {
  std::string out = kHead;
  for (const auto& [name, entry] : protocol.all()) {
    const PreparedStatement& statement = *entry.statement;
    const std::vector<uint32_t>* resolved = protocol.resolved_types(statement.id);
    std::string exact = resolved != nullptr                    ? oid_types(*resolved)
                        : statement.resolved_types.has_value() ? oid_types(*statement.resolved_types)
                        : !statement.own                       ? oid_types(statement.param_types)
                                                               : std::string("NULL");
    append_row(out, name, statement.query, entry.prepared_at, exact, oid_types(statement.param_types),
               /*from_sql=*/false, literal(statement.server_name));
  }
  for (const auto& [name, held] : sql.all()) {
    append_row(out, name, held.source.empty() ? held.sql : held.source, held.prepared_at, "NULL",
               named_types(held.prepare.types), /*from_sql=*/true,
               servers_hold_sql ? literal(name) : std::string("NULL"));
  }
  return out + kTail;
}

}  // namespace sw::session
