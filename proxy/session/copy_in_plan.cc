#include "session/copy_in_plan.h"

#include <algorithm>
#include <cctype>

#include "sqltext/copy_sql.h"

namespace sw::session {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

Status invalid(const std::string& message) { return Status::client("22023", message); }

// A one-byte option (DELIMITER, QUOTE, ESCAPE).
Status one_byte(const parser::CopyOption& option, char& out) {
  if (option.value.size() != 1)
    return invalid("COPY " + option.name + " must be a single one-byte character");
  if (option.value[0] == '\r' || option.value[0] == '\n')
    return invalid("COPY " + option.name + " cannot be newline or carriage return");
  out = option.value[0];
  return Status::ok();
}

// HEADER's argument as PostgreSQL 15 reads it: a boolean or MATCH.
Result<bool> header_value(const parser::CopyOption& option) {
  if (!option.has_value) return true;
  const std::string value = lower(option.value);
  if (value == "match" || value == "true" || value == "on" || value == "1") return true;
  if (value == "false" || value == "off" || value == "0") return false;
  return Status::client("22023", "header requires a Boolean value or \"match\"");
}

bool names_key(const parser::CopyOption& option, const std::string& key) {
  return option.all_columns ||
         std::find(option.columns.begin(), option.columns.end(), key) != option.columns.end();
}

Status apply_option(const parser::CopyOption& option, const router::TableRule& rule, wire::CopyInOptions& out,
                    bool& csv_only) {
  const std::string& name = option.name;
  if (name == "delimiter") return one_byte(option, out.delimiter);
  if (name == "null") {
    if (option.value.find_first_of("\r\n") != std::string::npos)
      return invalid("COPY null representation cannot use newline or carriage return");
    out.null_string = option.value;
    return Status::ok();
  }
  if (name == "header") {
    auto header = header_value(option);
    if (!header) return header.status();
    out.header = header.value();
    return Status::ok();
  }
  if (name == "quote" || name == "escape") {
    csv_only = true;
    return one_byte(option, name == "quote" ? out.quote : out.escape);
  }
  if (name == "force_not_null" || name == "force_null") {
    csv_only = true;
    (name == "force_null" ? out.key_force_null : out.key_force_not_null) = names_key(option, rule.key);
    return Status::ok();
  }
  if (name == "encoding") {
    return Status::client("0A000",
                          "COPY ... ENCODING into sharded table " + rule.config_name +
                              " is not supported: the shard key would be hashed in another encoding; "
                              "set client_encoding instead");
  }
  return Status::ok();  // FREEZE and the rest: the shards check them
}

}  // namespace

Result<CopyInPlan> plan_copy_in(const parser::StatementFacts& statement, const router::TableRule& rule) {
  wire::CopyFormat format = wire::CopyFormat::Text;
  for (const parser::CopyOption& option : statement.copy_options) {
    if (option.name != "format") continue;
    const std::string value = lower(option.value);
    if (value == "csv") {
      format = wire::CopyFormat::Csv;
    } else if (value == "binary") {
      format = wire::CopyFormat::Binary;
    } else if (value != "text") {
      return Status::client("22023", "COPY format \"" + option.value + "\" not recognized");
    }
  }
  CopyInPlan plan;
  plan.options = wire::copy_in_defaults(format);
  bool csv_only = false;
  bool escape_set = false;
  for (const parser::CopyOption& option : statement.copy_options) {
    if (option.name == "format") continue;
    if (Status applied = apply_option(option, rule, plan.options, csv_only); !applied) return applied;
    escape_set = escape_set || option.name == "escape";
  }
  if (!escape_set) plan.options.escape = plan.options.quote;
  if (csv_only && format != wire::CopyFormat::Csv)
    return Status::client("0A000",
                          "COPY quote, escape, force not null and force null are available only in CSV mode");
  if (format == wire::CopyFormat::Binary && plan.options.header)
    return Status::client("0A000", "cannot specify HEADER in BINARY mode");
  if (format != wire::CopyFormat::Binary && plan.options.delimiter == plan.options.quote &&
      format == wire::CopyFormat::Csv)
    return Status::client("22023", "COPY delimiter and quote must be different");

  if (statement.copy_columns.empty()) {
    const parser::TableRef& table = statement.tables.front();
    plan.key_position_sql = sqltext::copy_key_position_sql(table.schema, table.name, rule.key);
    return plan;
  }
  const auto key = std::find(statement.copy_columns.begin(), statement.copy_columns.end(), rule.key);
  if (key == statement.copy_columns.end()) {
    return Status::client("0A000", "COPY into sharded table " + rule.config_name +
                                       " must include its shard key " + rule.key +
                                       " in the column list: each row goes to the shard of its key");
  }
  plan.key_known = true;
  plan.options.key_field = static_cast<size_t>(key - statement.copy_columns.begin());
  return plan;
}

Result<CopyInPlan> plan_reference_copy_in(const parser::StatementFacts& statement, const std::string& table) {
  if (!statement.copy_from_client)
    return Status::client("0A000", "COPY into reference table " + table +
                                       " through shardwire reads only FROM STDIN (each shard would read the "
                                       "file or run the program); use psql \\copy");
  return CopyInPlan{};
}

}  // namespace sw::session
