// RoutingRules: the sharding config in the form routing uses.
#include "router/router.h"

namespace sw::router {

RoutingRules::RoutingRules(std::vector<TableRule> tables, std::string default_shard)
    : tables_(std::move(tables)), default_shard_(std::move(default_shard)) {}

Result<RoutingRules> RoutingRules::from_config(const config::Sharding& sharding) {
  std::vector<TableRule> tables;
  for (size_t i = 0; i < sharding.tables.size(); ++i) {
    const config::ShardedTable& table = sharding.tables[i];
    TableRule rule;
    rule.config_name = table.name;
    const size_t dot = table.name.rfind('.');
    if (dot == std::string::npos) {
      rule.name = table.name;
    } else {
      rule.schema = table.name.substr(0, dot);
      rule.name = table.name.substr(dot + 1);
    }
    rule.key = table.key;
    Result<KeyType> type = key_type_from_name(table.type);
    if (!type.is_ok()) {
      return Status::config("sharding.tables[" + std::to_string(i) + "] (" + table.name +
                            "): " + type.status().message);
    }
    rule.key_type = type.value();
    tables.push_back(std::move(rule));
  }
  return RoutingRules(std::move(tables), sharding.default_shard);
}

const TableRule* RoutingRules::find(std::string_view schema, std::string_view name) const {
  for (const TableRule& rule : tables_) {
    if (rule.name != name) continue;
    if (schema.empty() || rule.schema.empty() || rule.schema == schema) return &rule;
  }
  return nullptr;
}

}  // namespace sw::router
