// The mover's console commands (docs/architecture.md §8.9, §8.11, §10).
#include <cctype>
#include <cstdlib>

#include "admin/command.h"

namespace sw::admin::detail {
namespace {

Result<int64_t> parse_number(std::string_view word, const std::string& usage) {
  if (word.empty() || word.size() > 18) return Status::client("08P01", "usage: " + usage);
  for (char c : word) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return Status::client("08P01", "usage: " + usage);
  }
  return std::strtoll(std::string(word).c_str(), nullptr, 10);
}

// "<VERB> MIGRATION <id>" and friends: a keyword, then one number, then nothing.
Result<Command> keyword_and_number(Verb verb, std::string_view rest, const char* keyword,
                                   const std::string& usage) {
  if (upper(next_word(rest)) != keyword) return Status::client("08P01", "usage: " + usage);
  auto number = parse_number(next_word(rest), usage);
  if (!number) return number.status();
  if (!rest.empty()) return Status::client("08P01", "usage: " + usage);
  Command command;
  command.verb = verb;
  command.number = *number;
  return command;
}

Result<Command> parse_move(std::string_view rest) {
  const std::string usage = "MOVE BUCKETS <list or ranges> TO <shard>, e.g. MOVE BUCKETS 1,5,10-20 TO s3";
  if (upper(next_word(rest)) != "BUCKETS") return Status::client("08P01", "usage: " + usage);
  std::string upper_rest = upper(rest);
  size_t to = upper_rest.rfind(" TO ");
  if (to == std::string::npos) return Status::client("08P01", "usage: " + usage);
  std::string_view shard = trim(rest.substr(to + 4));
  Command command;
  command.verb = Verb::MoveBuckets;
  command.argument = std::string(trim(rest.substr(0, to)));
  command.shard = std::string(shard);
  if (command.argument.empty() || shard.empty() || shard.find_first_of(" \t,") != std::string_view::npos)
    return Status::client("08P01", "usage: " + usage);
  return command;
}

// "VERIFY REFERENCE <table>": one table name (maybe schema-qualified), as configured.
Result<Command> parse_verify_reference(std::string_view rest) {
  const std::string usage = "VERIFY REFERENCE <table>, e.g. VERIFY REFERENCE plans";
  std::string_view table = next_word(rest);
  if (table.empty() || !rest.empty()) return Status::client("08P01", "usage: " + usage);
  Command command;
  command.verb = Verb::VerifyReference;
  command.argument = std::string(table);
  return command;
}

Result<Command> parse_rebalance(std::string_view rest) {
  const std::string usage = "REBALANCE [TO <shard>[, <shard> ...]] [BY DATA | BY BUCKETS] [DRY RUN]";
  Command command;
  command.verb = Verb::Rebalance;
  // Strips `suffix` (any case) from the end of rest; true when it was there.
  auto strip = [&rest](std::string_view suffix) {
    const std::string upper_rest = upper(rest);
    if (upper_rest.size() < suffix.size() ||
        upper_rest.compare(upper_rest.size() - suffix.size(), suffix.size(), suffix) != 0)
      return false;
    rest = trim(rest.substr(0, rest.size() - suffix.size()));
    return true;
  };
  command.dry_run = strip("DRY RUN");
  if (strip("BY BUCKETS"))
    command.by_buckets = true;
  else
    strip("BY DATA");
  if (rest.empty()) return command;
  if (upper(next_word(rest)) != "TO" || rest.empty()) return Status::client("08P01", "usage: " + usage);
  std::string name;
  for (char c : std::string(rest) + ",") {
    if (c == ',' || std::isspace(static_cast<unsigned char>(c))) {
      if (!name.empty()) command.shards.push_back(name);
      name.clear();
    } else {
      name += c;
    }
  }
  if (command.shards.empty()) return Status::client("08P01", "usage: " + usage);
  return command;
}

}  // namespace

std::optional<Result<Command>> parse_mover_command(const std::string& first, std::string_view rest) {
  if (first == "MOVE") return parse_move(rest);
  if (first == "REBALANCE") return parse_rebalance(rest);
  if (first == "CANCEL")
    return keyword_and_number(Verb::CancelMigration, rest, "MIGRATION", "CANCEL MIGRATION <id>");
  if (first == "ROLLBACK")
    return keyword_and_number(Verb::RollbackMigration, rest, "MIGRATION", "ROLLBACK MIGRATION <id>");
  if (first == "EXPIRE")
    return keyword_and_number(Verb::ExpireRollback, rest, "ROLLBACK", "EXPIRE ROLLBACK <id>");
  if (first == "VERIFY") {
    std::string_view after = rest;
    if (upper(next_word(after)) == "REFERENCE") return parse_verify_reference(after);
    return keyword_and_number(Verb::VerifyBucket, rest, "BUCKET", "VERIFY BUCKET <n>");
  }
  // PAUSE and RESUME alone are pgbouncer's; with MIGRATION they are the mover's.
  std::string_view after = rest;
  if ((first == "PAUSE" || first == "RESUME") && upper(next_word(after)) == "MIGRATION") {
    Verb verb = first == "PAUSE" ? Verb::PauseMigration : Verb::ResumeMigration;
    return keyword_and_number(verb, rest, "MIGRATION", first + " MIGRATION <id>");
  }
  return std::nullopt;
}

}  // namespace sw::admin::detail
