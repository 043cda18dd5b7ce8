// Where a request goes, decided before a server is attached. Pure: no I/O.
//  * scan_extended_batch() reads an extended-protocol batch at the front of the client's input up
//    to the message that decides it: its first Bind (and what follows it, to recognise a
//    BEGIN/COMMIT the proxy answers itself), or a Sync/Flush before any Bind.
//  * place() turns the router's answer into what the session does: run on a shard, wait for a
//    cutover, fan out, or refuse.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "parser/analyze.h"
#include "router/router.h"
#include "session/prepared_statements.h"
#include "stats/traffic.h"
#include "wire/frame_reader.h"
#include "wire/messages.h"

namespace sw::session {

// A statement a Bind can name: its text and parameter types.
struct BatchStatement {
  std::string query;
  std::vector<uint32_t> types;
  // Its facts when they were analyzed at its Parse (the client's unnamed statement): a Bind
  // reuses them instead of looking the text up again. Null: analyzed at the Bind.
  std::shared_ptr<const parser::QueryFacts> facts;
};

// The Parses of a batch before its Bind, by name; a later Parse of a name replaces the earlier.
// Their buffers are reused: a batch takes this thread's spare entries at its first Parse and
// hands them back when it ends (as router::recycle does for routes), so a stream of batches
// copies statement texts without allocating; a batch without Parse costs nothing. Move-only.
class ParsedStatements {
 public:
  struct Entry {
    std::string name;
    BatchStatement statement;
    std::string_view input_text;  // the Parse's query where it is in the scanned input
  };
  ParsedStatements() = default;
  ~ParsedStatements() {
    if (!entries_.empty()) give_back();
  }
  ParsedStatements(ParsedStatements&& other) noexcept;
  ParsedStatements& operator=(ParsedStatements&& other) noexcept;
  ParsedStatements(const ParsedStatements&) = delete;
  ParsedStatements& operator=(const ParsedStatements&) = delete;

  // The statement named `name`, emptied (its buffers kept): a new entry, or the one an earlier
  // Parse of the name made.
  Entry& set(std::string_view name);
  const Entry* find_entry(std::string_view name) const;
  const BatchStatement* find(std::string_view name) const {
    const Entry* entry = find_entry(name);
    return entry != nullptr ? &entry->statement : nullptr;
  }
  const Entry* begin() const { return entries_.data(); }
  const Entry* end() const { return entries_.data() + size_; }
  bool empty() const { return size_ == 0; }

 private:
  void give_back();
  std::vector<Entry> entries_;  // [0, size_) are the batch's Parses; the rest spare buffers
  size_t size_ = 0;
};

struct ExtendedBatch {
  enum class Kind {
    NeedMore,    // the messages that decide the batch have not all arrived
    Unroutable,  // the default shard runs it and reports what is wrong (malformed, unknown, multi)
    NoBind,      // Sync, Flush or Query before any Bind: Parse/Describe/Close only, runs on any shard
    Bound,       // a Bind whose statement and values pick the shard
  };
  Kind kind = Kind::NeedMore;
  bool flushed = false;     // NoBind: ended by a Flush (no Sync: the server stays at mid-batch)
  ParsedStatements parsed;  // the batch's Parses before its Bind
  // Bound:
  wire::BindMessage bind;
  size_t bind_end = 0;         // offset just past the Bind
  bool client_parsed = false;  // the Bind names a statement parsed in this batch
  // The statement the Bind names when it is not a prepared one: in `parsed`, or the session's
  // unnamed statement passed to scan_extended_batch (not copied: the batch is used before the
  // session parses another).
  const BatchStatement* statement = nullptr;
  std::string_view parse_text;  // client_parsed: the query of the Parse it names, in the input
  // The client's prepared statement the Bind names (not parsed in this batch); facts resolved
  // when it was interned, so a Bind costs a name lookup, not a text hash and compare.
  std::shared_ptr<const PreparedStatement> prepared;
  std::shared_ptr<const parser::QueryFacts> facts;  // of the statement: exactly one
  // [Parse] Bind [Describe portal] Execute with nothing only a server can answer: the proxy may
  // answer it itself if it is transaction control. control_size is 0 otherwise.
  size_t control_size = 0;
  std::string control_answer;  // ParseComplete/BindComplete/NoData owed before CommandComplete

  std::string_view query() const {
    return prepared ? std::string_view(prepared->query) : std::string_view(statement->query);
  }
  const std::vector<uint32_t>& types() const { return prepared ? prepared->param_types : statement->types; }
  const parser::StatementFacts& only() const { return facts->statements.front(); }
};

// `unnamed` is the last unnamed statement parsed before this batch; `named` the client's
// prepared statements.
ExtendedBatch scan_extended_batch(std::string_view input, const wire::Limits& limits,
                                  const BatchStatement& unnamed, const ClientStatements& named);

enum class Protocol { Simple, Extended };

struct Placement {
  enum class Kind {
    Run,             // on `shard`
    WaitForCutover,  // a statement on a bucket in cutover
    FanOut,          // on every shard (simple: scatter read or DDL; extended: scatter read)
    Refuse,          // answer `error`
  };
  Kind kind = Kind::Run;
  int shard = -1;
  bool routed = false;  // the route is final: the message that picked the server is not checked again
  stats::RouteLabel label = stats::RouteLabel::Default;
  Status error;
};

// `in_transaction`: a deferred BEGIN waits for its shard; a keyless read there fans out on the
// transaction's legs (the session decides whether it may, and does not wait for a cutover), DDL
// on every shard is refused. A statement on a MIGRATING bucket, read or write, waits for the
// cutover's outcome. Without
// `read_lease_valid` (docs/architecture.md §7.4) reads of sharded tables are refused (57P03): the
// directory may be stale and reads meet no fence.
Placement place(const router::Route& route, Protocol protocol, bool in_transaction, int default_shard,
                bool read_lease_valid);

// A write of a reference table (Route::reference_write) with other statements in its Query while
// the session holds a server (a transaction block, session pooling) is refused with this: it runs
// on every shard only alone.
Status reference_write_in_transaction(const router::Route& route);
// A split INSERT (Route::split) inside a transaction block with other statements in its Query.
Status split_insert_refusal(const router::Route& route);

// Whether place() consults `read_lease_valid` for this route: a read of a sharded table on one
// shard (not in cutover) or a scatter read. Callers evaluate the lease (a clock read and an
// atomic load) only then.
bool needs_read_lease(const router::Route& route);
// Whether place() reads `default_shard` for this route (a Session or AtBind route). Callers look
// the default shard up (a name lookup in the directory) only then, else pass -1.
bool needs_default_shard(const router::Route& route);

}  // namespace sw::session
