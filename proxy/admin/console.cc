#include "admin/console.h"

#include "admin/tables.h"
#include "parser/analyze.h"

namespace sw::admin {
namespace {

using Reply = std::function<void(std::string)>;

std::string failure(const Status& status) {
  return error(status.sqlstate, status.message,
               status.sqlstate == "08P01" ? "SHOW HELP lists the commands" : "");
}

bool needs_lists(Verb verb) { return verb == Verb::ShowClients || verb == Verb::ShowServers; }

bool needs_snapshot(Verb verb) {
  switch (verb) {
    case Verb::ShowDatabases:
    case Verb::ShowPools:
    case Verb::ShowClients:
    case Verb::ShowServers:
    case Verb::ShowStats:
    case Verb::ShowStatsTotals:
    case Verb::ShowLists: return true;
    default: return false;
  }
}

Result<ResultTable> route_of(const std::string& sql, const config::Config& config,
                             const DirectoryStatus& status) {
  if (!status.directory) return Status::proxy("57P03", "no bucket directory is loaded yet");
  auto rules = router::RoutingRules::from_config(config.sharding, config.file, !config.catalog.dsn.empty());
  if (!rules) return rules.status();
  auto facts = parser::analyze(sql);
  if (!facts) return facts.status();
  router::Route route =
      router::route_query(**facts, nullptr, *status.directory, *rules, router::Explain::Yes);
  return route_table(route, *status.directory);
}

}  // namespace

void Console::execute(std::string_view text, const Reply& reply) {
  auto command = parse_command(text);
  if (!command) {
    reply(failure(command.status()));
    return;
  }
  switch (command->verb) {
    case Verb::Pause:
    case Verb::Resume:
    case Verb::Reload:
    case Verb::Shutdown:
    case Verb::KillClient:
    case Verb::Reconnect: control(*command, reply); return;
    case Verb::ShowMigrations:
    case Verb::ShowRebalance:
    case Verb::MoveBuckets:
    case Verb::Rebalance:
    case Verb::PauseMigration:
    case Verb::ResumeMigration:
    case Verb::CancelMigration:
    case Verb::RollbackMigration:
    case Verb::ExpireRollback:
    case Verb::VerifyBucket:
    case Verb::VerifyReference: mover(*command, reply); return;
    default: show(*command, reply); return;
  }
}

void Console::show(const Command& command, const Reply& reply) {
  std::shared_ptr<const config::Config> config = host_.config();
  if (needs_snapshot(command.verb)) {
    ProxyState state = host_.state();
    host_.gather(needs_lists(command.verb),
                 [verb = command.verb, config, state, reply](const stats::Snapshot& snapshot) {
                   double uptime = static_cast<double>(stats::wall_clock_us() - state.started_at_us) / 1e6;
                   switch (verb) {
                     case Verb::ShowDatabases:
                       reply(databases_table(*config, snapshot, state.paused).encode());
                       return;
                     case Verb::ShowPools: reply(pools_table(*config, snapshot).encode()); return;
                     case Verb::ShowClients: reply(clients_table(snapshot).encode()); return;
                     case Verb::ShowServers: reply(servers_table(snapshot).encode()); return;
                     case Verb::ShowStats: reply(stats_table(snapshot, uptime).encode()); return;
                     case Verb::ShowStatsTotals: reply(stats_totals_table(snapshot).encode()); return;
                     default: reply(lists_table(*config, snapshot).encode()); return;
                   }
                 });
    return;
  }
  switch (command.verb) {
    case Verb::ShowHelp: reply(help_table().encode()); return;
    case Verb::ShowVersion: reply(version_table().encode()); return;
    case Verb::ShowConfig: reply(config_table(*config).encode()); return;
    case Verb::ShowUsers: reply(users_table(*config).encode()); return;
    case Verb::ShowState: reply(state_table(host_.state()).encode()); return;
    case Verb::ShowShards:
      reply(shards_table(*config, host_.directory_status().directory.get(), host_.state().shard_superuser)
                .encode());
      return;
    case Verb::ShowDirectory: reply(directory_table(host_.directory_status()).encode()); return;
    case Verb::ShowBuckets: {
      DirectoryStatus status = host_.directory_status();
      if (!status.directory) {
        reply(error("57P03", "no bucket directory is loaded yet"));
        return;
      }
      auto table = buckets_table(*status.directory, command.argument);
      reply(table ? table->encode() : failure(table.status()));
      return;
    }
    case Verb::ShowRoute: {
      auto table = route_of(command.argument, *config, host_.directory_status());
      reply(table ? table->encode() : failure(table.status()));
      return;
    }
    case Verb::ShowRouters:
      if (config->catalog.dsn.empty()) {
        reply(error("55000", "no catalog is configured (catalog.dsn): there are no registered routers"));
        return;
      }
      host_.list_routers([reply](Result<std::vector<catalog::RegisteredRouter>> routers) {
        reply(routers ? routers_table(*routers).encode() : failure(routers.status()));
      });
      return;
    case Verb::ShowSequences:
      if (config->catalog.dsn.empty()) {
        reply(error("55000",
                    "no catalog is configured (catalog.dsn): shardwire init has assigned no id slots"));
        return;
      }
      host_.list_id_slots([reply](Result<std::vector<catalog::IdSlot>> slots) {
        reply(slots ? id_slots_table(*slots).encode() : failure(slots.status()));
      });
      return;
    case Verb::ShowTransactions:
      if (config->catalog.dsn.empty()) {
        reply(
            error("55000",
                  "no catalog is configured (catalog.dsn): shardwire runs no two-phase commit without one"));
        return;
      }
      host_.list_in_doubt([reply](Result<std::vector<twopc::InDoubtTransaction>> rows) {
        reply(rows ? transactions_table(*rows).encode() : failure(rows.status()));
      });
      return;
    default: reply(error("XX000", "internal error: command not handled")); return;
  }
}

void Console::control(const Command& command, const Reply& reply) {
  switch (command.verb) {
    case Verb::Pause:
      if (host_.state().paused) {
        reply(error("55000", "already paused; RESUME first"));
        return;
      }
      host_.pause([reply] { reply(command_complete("PAUSE")); });
      return;
    case Verb::Resume: {
      Status resumed = host_.resume();
      reply(resumed ? command_complete("RESUME") : failure(resumed));
      return;
    }
    case Verb::Reload:
      host_.reload([reply](const Status& reloaded) {
        reply(reloaded ? command_complete("RELOAD") : failure(reloaded));
      });
      return;
    case Verb::Reconnect:
      host_.reconnect();
      reply(command_complete("RECONNECT"));
      return;
    case Verb::KillClient:
      host_.kill_client(command.client_id, [reply, id = command.client_id](bool found) {
        reply(found
                  ? command_complete("KILL_CLIENT")
                  : error("42704", "no client with id " + std::to_string(id), "SHOW CLIENTS lists the ids"));
      });
      return;
    case Verb::Shutdown:
      reply(command_complete("SHUTDOWN"));
      host_.shutdown(command.shutdown);
      return;
    default: reply(error("XX000", "internal error: command not handled")); return;
  }
}

}  // namespace sw::admin
