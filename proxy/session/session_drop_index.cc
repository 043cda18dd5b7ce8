// Session: DROP INDEX with several shards (drop_index.h). Outside a transaction it runs on every
// shard in turn, the default shard first with the client's statement; in a transaction, or
// CONCURRENTLY, it is refused (a transaction cannot span shards; CONCURRENTLY cannot run in the
// guarded form the other shards need).
#include <algorithm>

#include "config/config.h"
#include "session/session.h"
#include "wire/messages.h"

namespace sw::session {

std::optional<Result<DropIndex>> Session::drop_index_on_every_shard(
    const parser::StatementFacts& statement) const {
  if (statement.node_type != "DropStmt" || !host_.directory() || host_.directory()->shards().size() < 2)
    return std::nullopt;
  auto drop = parser::parse_drop_index(statement.text);
  if (!drop || !fits_guard(*drop)) return std::nullopt;
  if (drop->concurrently)
    return Result<DropIndex>(Status::client(
        "0A000",
        "DROP INDEX CONCURRENTLY cannot run through shardwire with several shards; use DROP INDEX "
        "(shardwire drops the index on every shard whose table is sharded) or run it on each shard"));
  if (txn_.control.deferred() || txn_.control.status() != 'I' || txn_.leg.attached())
    return Result<DropIndex>(Status::client(
        "0A000",
        "DROP INDEX cannot run inside a transaction block through shardwire with several shards (an "
        "index of a sharded table is on every shard); run it outside a transaction block"));
  return Result<DropIndex>(std::move(*drop));
}

Session::Start Session::start_drop_index(const wire::Frame& frame, const DropIndex& drop) {
  std::vector<Fanout::Target> targets;
  if (!every_shard_targets(&targets)) return Start::Answered;
  std::vector<TableName> sharded;
  for (const auto& table : host_.config().sharding.tables) {
    size_t dot = table.name.rfind('.');
    if (dot == std::string::npos)
      sharded.push_back({"", table.name});
    else
      sharded.push_back({table.name.substr(0, dot), table.name.substr(dot + 1)});
  }
  std::string guarded;
  wire::encode_query(guarded, guarded_drop_index(drop, sharded));
  const size_t first = static_cast<size_t>(default_shard());
  for (size_t i = 0; i < targets.size(); ++i)
    if (i != first) targets[i].query_message = guarded;
  // The default shard first: the client's own statement there, its answer and errors the client's.
  if (first < targets.size())
    std::rotate(targets.begin(), targets.begin() + first, targets.begin() + first + 1);
  return run_fanout(std::move(targets), std::string(whole(frame)), frame.size, /*scatter=*/false, false);
}

}  // namespace sw::session
