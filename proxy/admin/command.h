// The admin console's command language: one command per query, keywords case-insensitive,
// an optional trailing semicolon. Pure: text in, Command or a 08P01 error with a hint out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace sw::admin {

enum class Verb {
  // pgbouncer's
  ShowHelp,
  ShowVersion,
  ShowConfig,
  ShowDatabases,
  ShowPools,
  ShowClients,
  ShowServers,
  ShowStats,
  ShowStatsTotals,
  ShowLists,
  ShowUsers,
  ShowState,
  Pause,
  Resume,
  Reload,
  Shutdown,
  KillClient,
  Reconnect,
  // sharding
  ShowShards,
  ShowBuckets,
  ShowDirectory,
  ShowRouters,
  ShowSequences,
  ShowTransactions,
  ShowRoute,
  // the mover (command_mover.cc)
  ShowMigrations,
  ShowRebalance,
  MoveBuckets,
  Rebalance,
  PauseMigration,
  ResumeMigration,
  CancelMigration,
  RollbackMigration,
  ExpireRollback,
  VerifyBucket,
  VerifyReference,
};

enum class ShutdownMode {
  Immediate,       // SHUTDOWN: close every client now
  WaitForServers,  // SHUTDOWN WAIT_FOR_SERVERS: let transactions in progress finish (as SIGTERM)
  WaitForClients,  // SHUTDOWN WAIT_FOR_CLIENTS: stop accepting, exit when the last client leaves
};

struct Command {
  Verb verb = Verb::ShowHelp;
  std::string argument;    // SHOW BUCKETS <shard>, SHOW ROUTE <sql>, MOVE BUCKETS <list>,
                           // VERIFY REFERENCE <table>
  uint64_t client_id = 0;  // KILL_CLIENT
  ShutdownMode shutdown = ShutdownMode::Immediate;
  int64_t number = 0;               // the migration id, VERIFY BUCKET's bucket
  std::string shard;                // MOVE BUCKETS ... TO <shard>
  std::vector<std::string> shards;  // REBALANCE TO <shards>
  bool dry_run = false;             // REBALANCE ... DRY RUN
  bool by_buckets = false;          // REBALANCE ... BY BUCKETS (else by data)
};

Result<Command> parse_command(std::string_view text);

namespace detail {
// Words of a command, for the parsers in command*.cc.
std::string upper(std::string_view word);
std::string_view trim(std::string_view s);
std::string_view next_word(std::string_view& rest);
Status invalid(std::string_view text);
// The mover's commands; nullopt when `first` starts none of them.
std::optional<Result<Command>> parse_mover_command(const std::string& first, std::string_view rest);
}  // namespace detail

// One line per command, for SHOW HELP and error hints.
struct HelpEntry {
  std::string_view syntax;
  std::string_view description;
};
extern const HelpEntry kHelp[];
extern const size_t kHelpCount;

}  // namespace sw::admin
