// Session: the client's own two-phase commit (docs/architecture.md §5.9). PREPARE TRANSACTION
// runs on the one shard its transaction ran on (a transaction that ran on several is refused and
// rolled back: a gid names one prepared transaction, and shards may share a PostgreSQL cluster,
// where a gid is cluster-wide). COMMIT PREPARED / ROLLBACK PREPARED name only a gid, so with
// several shards they are tried shard after shard, each on its own server outside any
// transaction, until one finishes it (Fanout::Mode::FirstToSucceed). A gid with shardwire's own
// prefix is refused: recovery finishes exactly those (proxy/twopc/gid.h), never a client's.
#include <string>
#include <utility>

#include "parser/transaction_gid.h"
#include "session/session.h"
#include "twopc/gid.h"
#include "wire/messages.h"

namespace sw::session {
namespace {

using parser::StatementKind;

bool names_gid(StatementKind kind) {
  return kind == StatementKind::PrepareTransaction || kind == StatementKind::CommitPrepared ||
         kind == StatementKind::RollbackPrepared;
}

const char* statement_name(StatementKind kind) {
  switch (kind) {
    case StatementKind::PrepareTransaction: return "PREPARE TRANSACTION";
    case StatementKind::CommitPrepared: return "COMMIT PREPARED";
    default: return "ROLLBACK PREPARED";
  }
}

}  // namespace

// A statement of the transaction ran on a second shard. A leg that only began (session pooling:
// the BEGIN ran on the server the session held) is rolled back when the active leg's PREPARE
// ends the transaction (on_active_status), as its transaction did nothing.
bool Session::ran_on_several_shards() const { return txn_.shards.touched().size() > 1; }

// A gid of shardwire's own, or a PREPARE TRANSACTION of a transaction that ran on several shards.
Status Session::refuse_two_phase(const parser::StatementFacts& statement) const {
  if (!names_gid(statement.kind)) return Status::ok();
  const std::optional<std::string> gid = parser::plain_transaction_gid(statement.text);
  if (!gid)
    return Status::client("0A000", std::string(statement_name(statement.kind)) +
                                       " through shardwire takes its transaction identifier as one plain "
                                       "string literal ('...', without backslashes), so that shardwire can "
                                       "tell it from its own; write it so");
  if (twopc::is_shardwire_gid(*gid))
    return Status::client("42602", std::string(statement_name(statement.kind)) + " '" + *gid +
                                       "': transaction identifiers starting with \"" +
                                       std::string(twopc::kTwoPhaseGidPrefix) +
                                       "\" are reserved for shardwire's own two-phase commit; choose "
                                       "another identifier");
  if (statement.kind == StatementKind::PrepareTransaction && ran_on_several_shards())
    return Status::client("0A000",
                          "PREPARE TRANSACTION of a transaction that ran on several shards is not supported "
                          "through shardwire (a prepared transaction lives on one shard); the transaction "
                          "was rolled back. Prepare transactions that stay on one shard, or end this one "
                          "with COMMIT");
  return Status::ok();
}

// COMMIT/ROLLBACK PREPARED outside a transaction block with several shards. Inside a block it
// goes where the transaction is, whose server answers 25001 as PostgreSQL does.
bool Session::finishes_prepared_on_shards(const parser::StatementFacts& statement) const {
  return (statement.kind == StatementKind::CommitPrepared ||
          statement.kind == StatementKind::RollbackPrepared) &&
         host_.directory() && host_.directory()->shards().size() > 1 && txn_.control.status() == 'I' &&
         !txn_.control.deferred();
}

// `message` (the client's Query, or its batch rebuilt) on every shard in turn, until one knows
// the gid; the client gets that shard's answer, or one shard's 42704.
Session::Start Session::start_finish_prepared(const parser::StatementFacts& statement, std::string message,
                                              size_t consumed, bool hide_parse_complete) {
  if (Status refused = refuse_two_phase(statement); !refused.is_ok()) {
    refuse_request(refused);
    return Start::Answered;
  }
  std::vector<Fanout::Target> targets;
  if (!every_shard_targets(&targets)) return Start::Answered;
  return run_fanout(std::move(targets), std::move(message), consumed, /*scatter=*/false, hide_parse_complete,
                    /*first_to_succeed=*/true);
}

// The same while the session holds a server outside a transaction (session pooling): the
// fanout's servers are others, the held one stays as it is.
Session::Next Session::finish_prepared_beside_leg(const wire::Frame& query) {
  if (request_.batch_open || server_lent()) return Next::Forward;
  auto facts = facts_of_query(query);
  if (!facts || facts->statements.size() != 1 || !finishes_prepared_on_shards(facts->statements.front()))
    return Next::Forward;
  if (!txn_.leg.tracker.idle()) return wait_for_active_leg();
  const Start started =
      start_finish_prepared(facts->statements.front(), std::string(whole(query)), query.size, false);
  return started == Start::Answered ? Next::Continue : Next::Stop;
}

Session::Next Session::finish_prepared_batch_beside_leg(const ExtendedBatch& batch) {
  if (!finishes_prepared_on_shards(batch.only())) return Next::Forward;
  if (!txn_.leg.tracker.idle()) return wait_for_active_leg();
  return start_extended_finish_prepared(batch) == Start::Answered ? Next::Continue : Next::Stop;
}

// The extended protocol: the batch must be [Parse] Bind [Describe portal] Execute Sync; every
// shard gets it with the statement parsed as the unnamed one.
Session::Start Session::start_extended_finish_prepared(const ExtendedBatch& bound) {
  std::string_view input = client_input();
  size_t offset = bound.bind_end;
  std::string batch;
  wire::encode_parse(batch, "", bound.query(), bound.types());
  wire::encode_bind_renamed(batch, bound.bind, "");
  for (char type : {'D', 'E', 'S'}) {
    auto next = wire::read_frame(input.substr(offset), wire::Sender::Client, limits_);
    if (next.status == wire::FrameStatus::NeedMore) return Start::Wait;
    const bool matches = next.status == wire::FrameStatus::Complete && next.frame.type == type &&
                         (type != 'D' || wire::describes_portal(next.frame.body));
    if (!matches && type == 'D') continue;
    if (!matches) {
      refuse_request(Status::client("0A000", std::string(statement_name(bound.only().kind)) +
                                                 " through shardwire with several shards runs only as one "
                                                 "batch of Parse, Bind, Describe, Execute and Sync"));
      return Start::Answered;
    }
    batch.append(whole(next.frame));
    offset += next.frame.size;
  }
  remember_parsed(bound.parsed);
  return start_finish_prepared(bound.only(), std::move(batch), offset, !bound.client_parsed);
}

}  // namespace sw::session
