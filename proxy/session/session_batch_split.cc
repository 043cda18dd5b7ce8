// Session: an extended-protocol batch whose Binds go to several shards before its Sync, outside a
// transaction block (`executemany` over tenants of several shards; docs/architecture.md §5.11).
// It runs as one implicit transaction per shard, each shard's units in the client's order,
// committed together (SplitInsert with a BatchAnswer), with one ReadyForQuery.
#include <algorithm>

#include "common/log.h"
#include "net/loop.h"
#include "session/session.h"
#include "wire/bind_values.h"
#include "wire/message_writer.h"
#include "wire/messages.h"

namespace sw::session {
namespace {

// One client [Parse] Bind [Describe portal] Execute of the bound statement.
struct Unit {
  bool parsed = false;
  wire::BindMessage bind;
  bool describe = false;
  int part = -1;
};

enum class Shape { NeedMore, Units, Other };

// The bytes of a batch held while its Sync is awaited.
constexpr size_t kMaxAwaitedBatch = 1u << 20;

// The batch from the start of `input` up to its Sync, as units of the statement the first Bind
// names (`name`, `query`); Other for any other message, portal, statement or row limit. A Flush
// is Other too: a client that flushes waits for answers before its Sync (psycopg's pipeline),
// and the units' answers come only once every shard ran its units.
Shape scan_units(std::string_view input, const wire::Limits& limits, std::string_view name,
                 std::string_view query, std::vector<Unit>& units, size_t& size) {
  size_t offset = 0;
  Unit unit;
  bool bound = false;  // the unit's Bind was read
  for (;;) {
    auto result = wire::read_frame(input.substr(offset), wire::Sender::Client, limits);
    if (result.status == wire::FrameStatus::NeedMore) return Shape::NeedMore;
    if (result.status != wire::FrameStatus::Complete) return Shape::Other;
    const wire::Frame& frame = result.frame;
    offset += frame.size;
    switch (frame.type) {
      case 'P': {
        auto parse = wire::decode_parse(frame.body);
        if (bound || unit.parsed || !parse || parse->statement != name || parse->query != query)
          return Shape::Other;
        unit.parsed = true;
        break;
      }
      case 'B': {
        auto bind = wire::decode_bind(frame.body);
        if (bound || !bind || !bind->portal.empty() || bind->statement != name) return Shape::Other;
        unit.bind = *bind;
        bound = true;
        break;
      }
      case 'D': {
        auto target = wire::decode_target(frame.body);
        if (!bound || unit.describe || !target || target->kind != 'P' || !target->name.empty()) {
          return Shape::Other;
        }
        unit.describe = true;
        break;
      }
      case 'E': {
        auto execute = wire::decode_execute(frame.body);
        if (!bound || !execute || !execute->portal.empty() || execute->max_rows != 0) return Shape::Other;
        units.push_back(unit);
        unit = Unit{};
        bound = false;
        break;
      }
      case 'S':
        if (bound || unit.parsed || units.size() < 2) return Shape::Other;
        size = offset;
        return Shape::Units;
      default: return Shape::Other;
    }
  }
}

// True when the batch at the start of `input` is whole and has fewer than two Executes (or a
// malformed message) before its Sync: scan_units would find it Other. Read from the message
// headers alone (wire::peek_frame), without decoding: most batches are one [Parse] Bind Describe
// Execute Sync. A frame read_frame refuses (unknown type, over its limit) is walked over: then
// scan_units, which reads each frame, finds the batch Other.
bool one_execution(std::string_view input) {
  uint64_t offset = 0;
  int executes = 0;
  for (;;) {
    const wire::FramePeek peek = wire::peek_frame(input.substr(offset));
    if (peek.malformed) return true;
    if (peek.size == 0 || input.size() - offset < peek.size) return false;  // the Sync decides: scan it all
    offset += peek.size;
    if (peek.type == 'E' && ++executes == 2) return false;
    if (peek.type == 'S') return true;
  }
}

// Each shard's messages after its BEGIN: the statement parsed as the unnamed one, its units in
// the client's order (Binds renamed to it), Sync.
std::string units_request(const std::vector<Unit>& units, int part, std::string_view query,
                          const std::vector<uint32_t>& types) {
  std::string out;
  wire::encode_parse(out, "", query, types);
  for (const Unit& unit : units) {
    if (unit.part != part) continue;
    wire::encode_bind_renamed(out, unit.bind, "");
    if (unit.describe) wire::encode_target(out, 'D', 'P', "");
    wire::MessageWriter(out).begin('E').cstr("").int32(0).end();
  }
  wire::encode_sync(out);
  return out;
}

// Sets each unit's part (the index of its shard in `shards`, which it fills); false when a Bind
// does not route to one shard out of cutover (the batch then runs the usual way).
bool route_units(std::vector<Unit>& units, const parser::StatementFacts& statement,
                 const std::vector<uint32_t>& types, const router::Directory& directory,
                 const router::RoutingRules& rules, wire::BindValues& values, std::vector<int>& shards) {
  for (Unit& unit : units) {
    if (!wire::decode_bind_values(unit.bind.rest, types, &values).is_ok()) return false;
    router::Route route = router::route(statement, &values, directory, rules);
    if (route.kind != router::RouteKind::Shard || route.migrating) return false;
    auto found = std::find(shards.begin(), shards.end(), route.shard);
    unit.part = static_cast<int>(found - shards.begin());
    if (found == shards.end()) shards.push_back(route.shard);
  }
  return true;
}

}  // namespace

// Called at a batch's first Bind with no server attached. Returns nothing when the batch is not
// one to run across shards (the usual path runs, or refuses, it).
std::optional<Session::Start> Session::start_batch_across_shards(const ExtendedBatch& bound) {
  if (txn_.control.deferred() || pools_.session_pooling || !host_.directory()) return std::nullopt;
  if (one_execution(client_input())) return std::nullopt;
  std::vector<Unit> units;
  size_t size = 0;
  const Shape shape = scan_units(client_input(), limits_, bound.bind.statement, bound.query(), units, size);
  if (shape == Shape::Other) return std::nullopt;
  const router::Directory& directory = *host_.directory();
  std::vector<int> shards;  // part index -> shard
  if (!route_units(units, bound.only(), bound.types(), directory, host_.routing_rules(), request_.bind_values,
                   shards))
    return std::nullopt;
  if (shape == Shape::NeedMore) {
    // The Sync decides (a server, too, answers nothing before a Sync or Flush); a batch larger
    // than kMaxAwaitedBatch runs as before, on its first Bind's shard.
    if (client_input().size() > kMaxAwaitedBatch) return std::nullopt;
    return Start::Wait;
  }
  if (shards.size() < 2) return std::nullopt;
  if (bound.only().writes && cross_shard_writes() != CrossShardWrites::TwoPhase) return std::nullopt;

  Status error;
  std::vector<SplitInsert::Part> parts;
  std::vector<pool::Pool*> pools;
  for (size_t part = 0; part < shards.size(); ++part) {
    SplitInsert::Part unit_part;
    unit_part.target.pool = pool_for_shard(shards[part], &error);
    if (unit_part.target.pool == nullptr) {
      refuse_request(error);
      return Start::Answered;
    }
    unit_part.target.shard = directory.shard_name(static_cast<uint16_t>(shards[part]));
    unit_part.target.index = shards[part];
    unit_part.request = units_request(units, static_cast<int>(part), bound.query(), bound.types());
    pools.push_back(unit_part.target.pool);
    parts.push_back(std::move(unit_part));
  }
  SplitInsert::Setup setup;
  setup.what = "a batch of " + std::to_string(units.size()) + " executions on " +
               std::to_string(shards.size()) + " shards";
  for (const Unit& unit : units) {
    setup.unit_part.push_back(unit.part);
    setup.unit_parsed.push_back(unit.parsed);
  }
  LOG_DEBUG("client=c%llu %s", (unsigned long long)id(), setup.what.c_str());
  remember_parsed(bound.parsed);
  return run_split_insert(std::move(parts), std::move(setup), std::move(pools), size);
}

}  // namespace sw::session
