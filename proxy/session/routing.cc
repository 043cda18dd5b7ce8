#include "session/routing.h"

#include <algorithm>
#include <utility>

namespace sw::session {
namespace {

using wire::FrameStatus;

// Bounds on what a thread keeps of the batches it scanned: a batch with more Parses, or a text
// larger, allocates again (the rare, large ones are not kept for the life of the thread).
constexpr size_t kMaxSpareParses = 8;
constexpr size_t kMaxSpareText = size_t{16} * 1024;

std::vector<ParsedStatements::Entry>& spare_parses() {
  thread_local std::vector<ParsedStatements::Entry> spare;  // a vector's 24 bytes of static TLS
  return spare;
}

}  // namespace

ParsedStatements::ParsedStatements(ParsedStatements&& other) noexcept
    : entries_(std::move(other.entries_)), size_(std::exchange(other.size_, 0)) {
  other.entries_.clear();
}

ParsedStatements& ParsedStatements::operator=(ParsedStatements&& other) noexcept {
  if (this != &other) {
    if (!entries_.empty()) give_back();
    entries_ = std::move(other.entries_);
    size_ = std::exchange(other.size_, 0);
    other.entries_.clear();
  }
  return *this;
}

// Hands the buffers to the thread's spare when it has none (a nested batch's stay with it):
// the facts are released, the texts kept for the next batch. Entries past size_ were emptied so
// when they were handed back before.
void ParsedStatements::give_back() {
  std::vector<Entry>& spare = spare_parses();
  if (!spare.empty()) return;
  if (size_ > kMaxSpareParses) size_ = kMaxSpareParses;
  if (entries_.size() > kMaxSpareParses)
    entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(kMaxSpareParses), entries_.end());
  for (size_t i = 0; i < size_; ++i) {
    BatchStatement& statement = entries_[i].statement;
    statement.facts.reset();
    if (statement.query.capacity() > kMaxSpareText) std::string().swap(statement.query);
  }
  spare.swap(entries_);
  size_ = 0;
}

ParsedStatements::Entry& ParsedStatements::set(std::string_view name) {
  if (entries_.empty()) entries_.swap(spare_parses());
  auto found = std::find_if(begin(), end(), [&](const Entry& entry) { return entry.name == name; });
  size_t at = static_cast<size_t>(found - begin());
  if (at == size_) {
    if (size_ == entries_.size()) entries_.emplace_back();
    entries_[size_++].name.assign(name);
  }
  Entry& entry = entries_[at];
  entry.statement.query.clear();
  entry.statement.types.clear();
  entry.statement.facts.reset();
  entry.input_text = {};
  return entry;
}

const ParsedStatements::Entry* ParsedStatements::find_entry(std::string_view name) const {
  for (const Entry& entry : *this)
    if (entry.name == name) return &entry;
  return nullptr;
}

namespace {

// The statement a Bind names: parsed earlier in the batch, the last unnamed one, or a prepared one.
bool find_bound_statement(ExtendedBatch& batch, const BatchStatement& unnamed,
                          const ClientStatements& named) {
  if (const ParsedStatements::Entry* parsed = batch.parsed.find_entry(batch.bind.statement)) {
    batch.client_parsed = true;
    batch.statement = &parsed->statement;
    batch.parse_text = parsed->input_text;
  } else if (batch.bind.statement.empty()) {
    batch.statement = &unnamed;
    batch.facts = unnamed.facts;
  } else if (auto prepared = named.shared(batch.bind.statement)) {
    batch.facts = prepared->facts;
    batch.prepared = std::move(prepared);
  } else {
    return false;
  }
  if (batch.facts == nullptr) {
    auto facts = parser::analyze(batch.query());
    if (!facts) return false;
    batch.facts = *facts;
  }
  return batch.facts->statements.size() == 1;
}

// After the Bind: [Describe] Execute makes a batch the proxy may answer itself. False while the
// messages that say so are still coming.
bool scan_after_bind(ExtendedBatch& batch, std::string_view input, const wire::Limits& limits,
                     std::string& answer, bool answerable) {
  wire::encode_bind_complete(answer);
  size_t end = batch.bind_end;
  auto rest = wire::read_frame(input.substr(end), wire::Sender::Client, limits);
  if (rest.status == FrameStatus::NeedMore) return false;
  if (rest.status == FrameStatus::Complete && rest.frame.type == 'D') {
    answer += "n";
    answer.append("\0\0\0\4", 4);
    end += rest.frame.size;
    rest = wire::read_frame(input.substr(end), wire::Sender::Client, limits);
    if (rest.status == FrameStatus::NeedMore) return false;
  }
  if (rest.status == FrameStatus::Complete && rest.frame.type == 'E' && answerable) {
    batch.control_size = end + rest.frame.size;
    batch.control_answer = std::move(answer);
  }
  return true;
}

}  // namespace

ExtendedBatch scan_extended_batch(std::string_view input, const wire::Limits& limits,
                                  const BatchStatement& unnamed, const ClientStatements& named) {
  ExtendedBatch batch;
  std::string answer;      // what the proxy owes if it answers a transaction-control batch
  bool answerable = true;  // nothing before the Bind needs a server's answer
  size_t offset = 0;
  while (true) {
    auto result = wire::read_frame(input.substr(offset), wire::Sender::Client, limits);
    if (result.status == FrameStatus::NeedMore) return batch;  // the Bind is still coming
    if (result.status == FrameStatus::Error) {
      batch.kind = ExtendedBatch::Kind::Unroutable;  // reported when the session reads it
      return batch;
    }
    const wire::Frame& frame = result.frame;
    switch (frame.type) {
      case 'P': {
        auto parse = wire::decode_parse(frame.body);
        if (parse) {
          ParsedStatements::Entry& entry = batch.parsed.set(parse->statement);
          entry.statement.query.assign(parse->query);
          entry.statement.types.assign(parse->param_types.begin(), parse->param_types.end());
          entry.input_text = parse->query;
        }
        wire::encode_parse_complete(answer);
        break;
      }
      case 'B': {
        auto bind = wire::decode_bind(frame.body);
        batch.kind = ExtendedBatch::Kind::Unroutable;
        if (!bind) return batch;
        batch.bind = *bind;
        batch.bind_end = offset + frame.size;
        if (!find_bound_statement(batch, unnamed, named)) return batch;
        batch.kind = scan_after_bind(batch, input, limits, answer, answerable)
                         ? ExtendedBatch::Kind::Bound
                         : ExtendedBatch::Kind::NeedMore;
        return batch;
      }
      case 'S':
      case 'H':
      case 'Q':  // a Query with no Sync before it: the server answers the batch with it
      case 'F':
        batch.kind = ExtendedBatch::Kind::NoBind;
        batch.flushed = frame.type == 'H';
        return batch;
      default: answerable = false; break;  // a statement Describe, Execute, Close: a server answers
    }
    offset += frame.size;
  }
}

namespace {
Placement refuse_stale_read() {
  Placement placement;
  placement.kind = Placement::Kind::Refuse;
  placement.error = Status::proxy("57P03",
                                  "shardwire cannot confirm the bucket directory for reads (catalog not "
                                  "reached within the read lease); retry later");
  return placement;
}
// A write of a reference table commits on every shard or on none: the session runs it on a server
// per shard (ReferenceWrite), in either protocol; in a transaction it joins its legs.
Placement place_reference_write() {
  Placement placement;
  placement.kind = Placement::Kind::FanOut;  // in a transaction: it joins the transaction's legs
  return placement;
}

// A scatter write (INSERT ... SELECT on several shards, each inserting its own buckets' rows; an
// UPDATE/DELETE with key lists on several shards) commits on all of them or on none, like a
// reference write, in either protocol; in a transaction it joins its legs. Like a scatter read it
// needs a confirmed directory (checked by the caller): a stale one could leave out a shard that
// now owns buckets.
Placement place_scatter_write(const router::Route& route) {
  Placement placement;
  placement.kind = route.migrating ? Placement::Kind::WaitForCutover : Placement::Kind::FanOut;
  return placement;
}

}  // namespace

Status reference_write_in_transaction(const router::Route& route) {
  return Status::client("0A000", "write of reference table " + route.table +
                                     " inside a transaction block (or with pool.mode session) runs on "
                                     "every shard only when sent alone in its own Query; send it alone");
}

bool needs_default_shard(const router::Route& route) {
  return route.kind == router::RouteKind::Session || route.kind == router::RouteKind::AtBind;
}

bool needs_read_lease(const router::Route& route) {
  using router::RouteKind;
  if (route.kind == RouteKind::Scatter) return true;
  return route.kind == RouteKind::Shard && !route.writes && !route.migrating;
}

namespace {

// COPY FROM STDIN into a sharded table: a fan-out of its own (CopyIn) in the simple protocol, after
// any cutover in progress (its rows may be in any bucket); in a transaction it joins its legs.
Placement place_copy_in(const router::Route& route, Protocol protocol) {
  Placement placement;
  placement.kind = Placement::Kind::Refuse;
  if (protocol == Protocol::Extended) {
    placement.error = Status::client("0A000", "COPY FROM STDIN into sharded table " + route.table +
                                                  " runs only in the simple query protocol (psql \\copy, "
                                                  "PQexec, CopyManager)");
  } else {  // in a transaction it joins the transaction's legs
    placement.kind = route.migrating ? Placement::Kind::WaitForCutover : Placement::Kind::FanOut;
  }
  return placement;
}

// A multi-row INSERT split by shard runs on a server of its own per shard (SplitInsert), after any
// cutover of its rows' buckets; in a transaction it joins its legs.
Placement place_split_insert(const router::Route& route) {
  Placement placement;
  placement.kind = route.migrating ? Placement::Kind::WaitForCutover : Placement::Kind::FanOut;
  return placement;
}

}  // namespace

Status split_insert_refusal(const router::Route& route) {
  return Status::client("0A000",
                        route.error.message +
                            " (an INSERT whose rows fall on several shards runs split by shard inside "
                            "a transaction block only when sent alone in its own Query; send it alone)");
}

Placement place(const router::Route& route, Protocol protocol, bool in_transaction, int default_shard,
                bool read_lease_valid) {
  using router::RouteKind;
  Placement placement;
  if (route.copy_in) return place_copy_in(route, protocol);
  switch (route.kind) {
    case RouteKind::Shard:
    case RouteKind::Default:
      // Reads wait too: the old owner no longer sees the writes the new one acknowledges.
      if (route.migrating) {
        placement.kind = Placement::Kind::WaitForCutover;
        return placement;
      }
      if (route.kind == RouteKind::Shard && !route.writes && !read_lease_valid) return refuse_stale_read();
      placement.shard = route.shard;
      placement.routed = true;
      placement.label =
          route.kind == RouteKind::Shard ? stats::RouteLabel::Shard : stats::RouteLabel::Default;
      return placement;
    case RouteKind::Session:
    case RouteKind::AtBind: placement.shard = default_shard; return placement;
    case RouteKind::Scatter:
    case RouteKind::AllShards:
      if (route.reference_write) return place_reference_write();
      if (route.kind == RouteKind::Scatter && !read_lease_valid) return refuse_stale_read();
      if (route.scatter_write()) return place_scatter_write(route);
      if (route.kind == RouteKind::Scatter && in_transaction) {
        placement.kind = Placement::Kind::FanOut;  // on the transaction's legs, joining the others
        return placement;
      }
      if (route.kind == RouteKind::Scatter && route.migrating) {
        placement.kind = Placement::Kind::WaitForCutover;  // every bucket is read: wait for the cutover
        return placement;
      }
      if (protocol == Protocol::Simple && !in_transaction) {
        placement.kind = Placement::Kind::FanOut;
        return placement;
      }
      if (protocol == Protocol::Extended && route.kind == RouteKind::Scatter && !in_transaction) {
        placement.kind = Placement::Kind::FanOut;
        return placement;
      }
      placement.kind = Placement::Kind::Refuse;  // DDL: applied shard after shard, not atomic
      placement.error = Status::client(
          "0A000", "statement on sharded table " + route.table +
                       (protocol == Protocol::Simple
                            ? " runs on every shard one after another, outside any transaction block; run "
                              "it outside BEGIN ... COMMIT"
                            : " needs every shard; shardwire runs such statements only in the simple query "
                              "protocol"));
      return placement;
    case RouteKind::Split: return place_split_insert(route);
    case RouteKind::Error: break;
  }
  placement.kind = Placement::Kind::Refuse;
  placement.error = route.error;
  return placement;
}

}  // namespace sw::session
