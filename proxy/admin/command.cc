#include "admin/command.h"

#include <cctype>
#include <cstdlib>
#include <string>
#include <vector>

namespace sw::admin {

const HelpEntry kHelp[] = {
    {"SHOW HELP", "this list"},
    {"SHOW VERSION", "shardwire version"},
    {"SHOW CONFIG", "the running configuration (secrets hidden)"},
    {"SHOW DATABASES", "one row per shard (pgbouncer columns)"},
    {"SHOW POOLS", "clients and servers per shard and user"},
    {"SHOW CLIENTS", "one row per client connection"},
    {"SHOW SERVERS", "one row per server connection"},
    {"SHOW STATS", "totals and averages per shard"},
    {"SHOW STATS_TOTALS", "totals per shard"},
    {"SHOW LISTS", "counts of internal lists"},
    {"SHOW USERS", "configured users"},
    {"SHOW STATE", "paused / running / shutting down"},
    {"SHOW SHARDS", "shards with their bucket counts"},
    {"SHOW BUCKETS [shard]", "bucket directory, optionally for one shard"},
    {"SHOW DIRECTORY", "directory version, load time and lease"},
    {"SHOW ROUTERS", "proxies registered in the catalog"},
    {"SHOW SEQUENCES", "each shard's id slot and the ranges its sequences get"},
    {"SHOW TRANSACTIONS", "two-phase transactions prepared on the shards, with their decision"},
    {"SHOW ROUTE <sql>", "where a statement would be routed"},
    {"PAUSE", "wait for transactions in progress, hold new ones"},
    {"RESUME", "release what PAUSE held"},
    {"RELOAD", "re-read the configuration file"},
    {"RECONNECT", "close every server connection once it is released"},
    {"KILL_CLIENT <id>", "close one client connection"},
    {"SHUTDOWN [WAIT_FOR_SERVERS|WAIT_FOR_CLIENTS]", "stop shardwire"},
    {"SHOW MIGRATIONS", "bucket moves and their progress: rows, bytes, rate and estimated time to finish"},
    {"SHOW REBALANCE",
     "the progress of the moves under way as one: rows, bytes, rate, estimated time to finish"},
    {"MOVE BUCKETS <list or ranges> TO <shard>",
     "start moving buckets (e.g. 1,5,10-20); returns the migration id"},
    {"REBALANCE [TO <shards>] [BY DATA | BY BUCKETS] [DRY RUN]",
     "plan moves that even out the data (BY BUCKETS: the bucket counts, fewest moves) and start them"},
    {"PAUSE MIGRATION <id>", "hold a migration between steps"},
    {"RESUME MIGRATION <id>", "let a paused migration go on"},
    {"CANCEL MIGRATION <id>", "stop a migration before its cutover and remove what it copied"},
    {"ROLLBACK MIGRATION <id>", "move the buckets back within the rollback window"},
    {"EXPIRE ROLLBACK <id>", "end the rollback window now and clean up the source"},
    {"VERIFY BUCKET <n>", "row count and checksum of a bucket on its shards"},
    {"VERIFY REFERENCE <table>", "row count and checksum of a reference table on every shard"},
};
const size_t kHelpCount = sizeof kHelp / sizeof kHelp[0];

namespace detail {

std::string upper(std::string_view word) {
  std::string out(word);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits off the first whitespace-separated word.
std::string_view next_word(std::string_view& rest) {
  rest = trim(rest);
  size_t end = 0;
  while (end < rest.size() && !std::isspace(static_cast<unsigned char>(rest[end]))) ++end;
  std::string_view word = rest.substr(0, end);
  rest = trim(rest.substr(end));
  return word;
}

Status invalid(std::string_view text) {
  return Status::client("08P01", "invalid command '" + std::string(text) + "', use SHOW HELP;");
}

}  // namespace detail

namespace {
using detail::invalid;
using detail::next_word;
using detail::trim;
using detail::upper;

Status no_argument(std::string_view command) {
  return Status::client("08P01", std::string(command) + " takes no argument; use SHOW HELP;");
}

struct ShowEntry {
  std::string_view name;
  Verb verb;
};
constexpr ShowEntry kShows[] = {
    {"HELP", Verb::ShowHelp},
    {"VERSION", Verb::ShowVersion},
    {"CONFIG", Verb::ShowConfig},
    {"DATABASES", Verb::ShowDatabases},
    {"POOLS", Verb::ShowPools},
    {"CLIENTS", Verb::ShowClients},
    {"SERVERS", Verb::ShowServers},
    {"STATS", Verb::ShowStats},
    {"STATS_TOTALS", Verb::ShowStatsTotals},
    {"LISTS", Verb::ShowLists},
    {"USERS", Verb::ShowUsers},
    {"STATE", Verb::ShowState},
    {"SHARDS", Verb::ShowShards},
    {"DIRECTORY", Verb::ShowDirectory},
    {"ROUTERS", Verb::ShowRouters},
    {"SEQUENCES", Verb::ShowSequences},
    {"TRANSACTIONS", Verb::ShowTransactions},
    {"MIGRATIONS", Verb::ShowMigrations},
    {"REBALANCE", Verb::ShowRebalance},
};

Result<Command> parse_show(std::string_view rest, std::string_view text) {
  std::string what = upper(next_word(rest));
  Command command;
  if (what == "ROUTE") {
    if (rest.empty()) return Status::client("08P01", "SHOW ROUTE needs a statement: SHOW ROUTE SELECT ...");
    command.verb = Verb::ShowRoute;
    command.argument = std::string(rest);
    return command;
  }
  if (what == "BUCKETS") {
    command.verb = Verb::ShowBuckets;
    command.argument = std::string(next_word(rest));
    if (!rest.empty()) return Status::client("08P01", "SHOW BUCKETS takes at most one shard name");
    return command;
  }
  for (const auto& show : kShows) {
    if (what != show.name) continue;
    if (!rest.empty()) return no_argument("SHOW " + what);
    command.verb = show.verb;
    return command;
  }
  return invalid(text);
}

Result<uint64_t> parse_client_id(std::string_view word) {
  if (!word.empty() && (word.front() == 'c' || word.front() == 'C')) word.remove_prefix(1);
  if (word.empty() || word.size() > 19)
    return Status::client("08P01", "KILL_CLIENT needs a client id (see SHOW CLIENTS)");
  for (char c : word) {
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return Status::client("08P01", "KILL_CLIENT needs a client id (see SHOW CLIENTS)");
  }
  return std::strtoull(std::string(word).c_str(), nullptr, 10);
}

}  // namespace

Result<Command> parse_command(std::string_view text) {
  std::string_view body = trim(text);
  while (!body.empty() && body.back() == ';') body = trim(body.substr(0, body.size() - 1));
  std::string_view rest = body;
  std::string first = upper(next_word(rest));
  if (first.empty()) return Status::client("08P01", "empty command; use SHOW HELP;");
  if (first != "SHOW" && body.find(';') != std::string_view::npos)
    return Status::client("08P01", "one command per query; use SHOW HELP;");
  if (first == "SHOW") return parse_show(rest, body);

  if (auto mover = detail::parse_mover_command(first, rest)) return std::move(*mover);
  Command command;
  if (first == "KILL_CLIENT") {
    auto id = parse_client_id(next_word(rest));
    if (!id) return id.status();
    if (!rest.empty()) return Status::client("08P01", "KILL_CLIENT takes one client id");
    command.verb = Verb::KillClient;
    command.client_id = *id;
    return command;
  }
  if (first == "SHUTDOWN") {
    std::string mode = upper(next_word(rest));
    command.verb = Verb::Shutdown;
    if (mode == "WAIT_FOR_SERVERS")
      command.shutdown = ShutdownMode::WaitForServers;
    else if (mode == "WAIT_FOR_CLIENTS")
      command.shutdown = ShutdownMode::WaitForClients;
    else if (!mode.empty())
      return invalid(body);
    if (!rest.empty()) return invalid(body);
    return command;
  }
  static constexpr ShowEntry kSimple[] = {{"PAUSE", Verb::Pause},
                                          {"RESUME", Verb::Resume},
                                          {"RELOAD", Verb::Reload},
                                          {"RECONNECT", Verb::Reconnect}};
  for (const auto& simple : kSimple) {
    if (first != simple.name) continue;
    if (!rest.empty()) return no_argument(first);
    command.verb = simple.verb;
    return command;
  }
  return invalid(body);
}

}  // namespace sw::admin
