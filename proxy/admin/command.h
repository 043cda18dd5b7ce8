// The admin console's command language: one command per query, keywords case-insensitive,
// an optional trailing semicolon. Pure: text in, Command or a 08P01 error with a hint out.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sw::admin {

enum class Verb {
  // pgbouncer's
  ShowHelp, ShowVersion, ShowConfig, ShowDatabases, ShowPools, ShowClients, ShowServers, ShowStats,
  ShowStatsTotals, ShowLists, ShowUsers, ShowState, Pause, Resume, Reload, Shutdown, KillClient, Reconnect,
  // sharding
  ShowShards, ShowBuckets, ShowDirectory, ShowRouters, ShowRoute,
};

enum class ShutdownMode {
  Immediate,       // SHUTDOWN: close every client now
  WaitForServers,  // SHUTDOWN WAIT_FOR_SERVERS: let transactions in progress finish (as SIGTERM)
  WaitForClients,  // SHUTDOWN WAIT_FOR_CLIENTS: stop accepting, exit when the last client leaves
};

struct Command {
  Verb verb = Verb::ShowHelp;
  std::string argument;     // SHOW BUCKETS <shard>, SHOW ROUTE <sql>
  uint64_t client_id = 0;   // KILL_CLIENT
  ShutdownMode shutdown = ShutdownMode::Immediate;
};

Result<Command> parse_command(std::string_view text);

// One line per command, for SHOW HELP and error hints.
struct HelpEntry {
  std::string_view syntax;
  std::string_view description;
};
extern const HelpEntry kHelp[];
extern const size_t kHelpCount;

}  // namespace sw::admin
