#include <algorithm>
#include <map>

#include "admin/tables.h"

namespace sw::admin {
namespace {

using T = ColumnType;

std::string mode_name(const config::Config& config) {
  return config.pool.mode == config::PoolMode::Session ? "session" : "transaction";
}

// The pgbouncer client/server row layout, shared by SHOW CLIENTS and SHOW SERVERS.
constexpr Column kSocketColumns[] = {
    {"type", T::Text},
    {"user", T::Text},
    {"database", T::Text},
    {"state", T::Text},
    {"addr", T::Text},
    {"port", T::Int4},
    {"local_addr", T::Text},
    {"local_port", T::Int4},
    {"connect_time", T::Text},
    {"request_time", T::Text},
    {"wait", T::Int4},
    {"wait_us", T::Int4},
    {"close_needed", T::Int4},
    {"ptr", T::Text},
    {"link", T::Text},
    {"remote_pid", T::Int4},
    {"tls", T::Text},
    {"application_name", T::Text},
    // shardwire's
    {"id", T::Int8},
    {"shard", T::Text},
    {"worker", T::Int4},
    {"pinned", T::Text},  // clients: what keeps it on its servers in transaction pooling
};

Value link(char kind, uint64_t id) { return id == 0 ? text("") : text(kind + std::to_string(id)); }

}  // namespace

ResultTable help_table() {
  static constexpr Column kColumns[] = {{"command", T::Text}, {"description", T::Text}};
  ResultTable table(kColumns);
  for (size_t i = 0; i < kHelpCount; ++i)
    table.add({text(std::string(kHelp[i].syntax)), text(std::string(kHelp[i].description))});
  return table;
}

ResultTable version_table() {
  static constexpr Column kColumns[] = {{"version", T::Text}};
  ResultTable table(kColumns);
  table.add({text("shardwire " SHARDWIRE_VERSION)});
  return table;
}

ResultTable config_table(const config::Config& config) {
  static constexpr Column kColumns[] = {
      {"key", T::Text}, {"value", T::Text}, {"default", T::Text}, {"changeable", T::Text}};
  ResultTable table(kColumns);
  const config::Config default_config;  // named: a temporary here trips GCC 12's -Wmaybe-uninitialized
  std::vector<config::Setting> defaults = config::settings(default_config);
  for (const auto& setting : config::settings(config)) {
    auto it =
        std::find_if(defaults.begin(), defaults.end(), [&](const auto& d) { return d.key == setting.key; });
    table.add({text(setting.key), text(setting.shown), text(it != defaults.end() ? it->shown : ""),
               text(setting.restart ? "no" : "yes")});
  }
  return table;
}

ResultTable databases_table(const config::Config& config, const stats::Snapshot& snapshot, bool paused) {
  static constexpr Column kColumns[] = {{"name", T::Text},
                                        {"host", T::Text},
                                        {"port", T::Int4},
                                        {"database", T::Text},
                                        {"force_user", T::Text},
                                        {"pool_size", T::Int4},
                                        {"min_pool_size", T::Int4},
                                        {"reserve_pool", T::Int4},
                                        {"pool_mode", T::Text},
                                        {"max_connections", T::Int4},
                                        {"current_connections", T::Int4},
                                        {"paused", T::Int4},
                                        {"disabled", T::Int4}};
  ResultTable table(kColumns);
  for (const auto& shard : config.shards) {
    int connections = 0;
    for (const auto& pool : snapshot.pools) {
      if (pool.shard == shard.name) connections += pool.sv_active + pool.sv_idle + pool.sv_login;
    }
    table.add({text(shard.name), text(shard.conn.host), number(shard.conn.port), text(shard.conn.dbname),
               shard.conn.user.empty() ? Value() : text(shard.conn.user), number(config.pool.size), number(0),
               number(0), text(mode_name(config)), number(0), number(connections), number(paused ? 1 : 0),
               number(0)});
  }
  table.add({text(config.admin.database), Value(), number(config.listen.port), text(config.admin.database),
             text("shardwire"), number(0), number(0), number(0), text("statement"), number(0), number(0),
             number(0), number(0)});
  return table;
}

ResultTable pools_table(const config::Config& config, const stats::Snapshot& snapshot) {
  static constexpr Column kColumns[] = {{"database", T::Text},
                                        {"user", T::Text},
                                        {"cl_active", T::Int4},
                                        {"cl_waiting", T::Int4},
                                        {"cl_active_cancel_req", T::Int4},
                                        {"cl_waiting_cancel_req", T::Int4},
                                        {"sv_active", T::Int4},
                                        {"sv_active_cancel", T::Int4},
                                        {"sv_being_canceled", T::Int4},
                                        {"sv_idle", T::Int4},
                                        {"sv_used", T::Int4},
                                        {"sv_tested", T::Int4},
                                        {"sv_login", T::Int4},
                                        {"maxwait", T::Int4},
                                        {"maxwait_us", T::Int4},
                                        {"pool_mode", T::Text},
                                        {"cl_pinned", T::Int4}};
  ResultTable table(kColumns);
  std::vector<stats::PoolInfo> pools = snapshot.pools;
  std::sort(pools.begin(), pools.end(), [](const auto& a, const auto& b) {
    return std::tie(a.shard, a.user) < std::tie(b.shard, b.user);
  });
  for (const auto& pool : pools) {
    table.add({text(pool.shard), text(pool.user), number(pool.cl_active), number(pool.cl_waiting), number(0),
               number(0), number(pool.sv_active), number(0), number(0), number(pool.sv_idle), number(0),
               number(0), number(pool.sv_login), number(pool.maxwait_us / 1000000),
               number(pool.maxwait_us % 1000000), text(mode_name(config)), number(pool.cl_pinned)});
  }
  return table;
}

ResultTable clients_table(const stats::Snapshot& snapshot) {
  ResultTable table(kSocketColumns);
  for (const auto& c : snapshot.clients) {
    table.add({text("C"),
               text(c.user),
               text(c.database),
               text(std::string(stats::client_state_name(c.state))),
               text(c.addr.addr),
               number(c.addr.port),
               text(c.local.addr),
               number(c.local.port),
               timestamp(c.connect_time_us),
               timestamp(c.request_time_us),
               number(c.wait_us / 1000000),
               number(c.wait_us % 1000000),
               number(0),
               link('c', c.id),
               link('s', c.server),
               number(0),
               text(c.tls ? "TLS" : ""),
               text(c.application_name),
               number(c.id),
               text(c.shard),
               number(c.worker),
               text(c.pinned)});
  }
  return table;
}

ResultTable servers_table(const stats::Snapshot& snapshot) {
  ResultTable table(kSocketColumns);
  for (const auto& s : snapshot.servers) {
    table.add({text("S"),
               text(s.user),
               text(s.shard),
               text(std::string(stats::server_state_name(s.state))),
               text(s.addr.addr),
               number(s.addr.port),
               text(s.local.addr),
               number(s.local.port),
               timestamp(s.connect_time_us),
               timestamp(s.request_time_us),
               number(0),
               number(0),
               number(0),
               link('s', s.id),
               link('c', s.client),
               number(s.remote_pid),
               text(s.tls ? "TLS" : ""),
               text(""),
               number(s.id),
               text(s.shard),
               number(s.worker),
               text("")});
  }
  return table;
}

namespace {
// Per-shard sums of every pool (all users).
std::map<std::string, stats::PoolTraffic> traffic_by_shard(const stats::Snapshot& snapshot) {
  std::map<std::string, stats::PoolTraffic> by_shard;
  for (const auto& pool : snapshot.pools) by_shard[pool.shard].merge(pool.traffic);
  return by_shard;
}

uint64_t per(uint64_t total, uint64_t count) { return count == 0 ? 0 : total / count; }
}  // namespace

ResultTable stats_table(const stats::Snapshot& snapshot, double uptime_seconds) {
  static constexpr Column kColumns[] = {
      {"database", T::Text},         {"total_xact_count", T::Int8}, {"total_query_count", T::Int8},
      {"total_received", T::Int8},   {"total_sent", T::Int8},       {"total_xact_time", T::Int8},
      {"total_query_time", T::Int8}, {"total_wait_time", T::Int8},  {"avg_xact_count", T::Int8},
      {"avg_query_count", T::Int8},  {"avg_recv", T::Int8},         {"avg_sent", T::Int8},
      {"avg_xact_time", T::Int8},    {"avg_query_time", T::Int8},   {"avg_wait_time", T::Int8}};
  ResultTable table(kColumns);
  auto per_second = [&](uint64_t n) {
    return number(static_cast<uint64_t>(uptime_seconds > 0 ? static_cast<double>(n) / uptime_seconds : 0));
  };
  for (const auto& [shard, t] : traffic_by_shard(snapshot)) {
    table.add({text(shard), number(t.xact_count()), number(t.query_count()), number(t.bytes_received),
               number(t.bytes_sent), number(t.xact_time_us), number(t.query_time_us), number(t.wait_time_us),
               per_second(t.xact_count()), per_second(t.query_count()), per_second(t.bytes_received),
               per_second(t.bytes_sent), number(per(t.xact_time_us, t.xact_count())),
               number(per(t.query_time_us, t.query_count())), number(per(t.wait_time_us, t.xact_count()))});
  }
  return table;
}

ResultTable stats_totals_table(const stats::Snapshot& snapshot) {
  static constexpr Column kColumns[] = {
      {"database", T::Text},   {"xact_count", T::Int8}, {"query_count", T::Int8}, {"bytes_received", T::Int8},
      {"bytes_sent", T::Int8}, {"xact_time", T::Int8},  {"query_time", T::Int8},  {"wait_time", T::Int8}};
  ResultTable table(kColumns);
  for (const auto& [shard, t] : traffic_by_shard(snapshot)) {
    table.add({text(shard), number(t.xact_count()), number(t.query_count()), number(t.bytes_received),
               number(t.bytes_sent), number(t.xact_time_us), number(t.query_time_us),
               number(t.wait_time_us)});
  }
  return table;
}

ResultTable lists_table(const config::Config& config, const stats::Snapshot& snapshot) {
  static constexpr Column kColumns[] = {{"list", T::Text}, {"items", T::Int4}};
  ResultTable table(kColumns);
  int login = snapshot.client_states[static_cast<size_t>(stats::ClientState::Login)];
  int clients = 0;
  for (int n : snapshot.client_states) clients += n;
  int servers = 0;
  for (const auto& pool : snapshot.pools) servers += pool.sv_active + pool.sv_idle + pool.sv_login;
  auto row = [&](const char* name, int64_t items) { table.add({text(name), number(items)}); };
  row("databases", static_cast<int64_t>(config.shards.size()) + 1);
  row("users", static_cast<int64_t>(config.auth.users.size()));
  row("pools", static_cast<int64_t>(snapshot.pools.size()));
  row("free_clients", 0);
  row("used_clients", clients - login);
  row("login_clients", login);
  row("free_servers", 0);
  row("used_servers", servers);
  row("dns_names", 0);
  row("dns_zones", 0);
  row("dns_queries", 0);
  row("dns_pending", 0);
  return table;
}

ResultTable users_table(const config::Config& config) {
  static constexpr Column kColumns[] = {{"name", T::Text}, {"pool_mode", T::Text}};
  ResultTable table(kColumns);
  for (const auto& user : config.auth.users) table.add({text(user.name), text(mode_name(config))});
  return table;
}

ResultTable state_table(const ProxyState& state) {
  static constexpr Column kColumns[] = {{"key", T::Text}, {"value", T::Text}};
  ResultTable table(kColumns);
  auto yes_no = [](bool b) { return text(b ? "yes" : "no"); };
  table.add({text("active"), yes_no(!state.paused && !state.shutting_down)});
  table.add({text("paused"), yes_no(state.paused)});
  table.add({text("suspended"), yes_no(false)});
  table.add({text("shutting_down"), yes_no(state.shutting_down)});
  table.add({text("started_at"), timestamp(state.started_at_us)});
  return table;
}

}  // namespace sw::admin
