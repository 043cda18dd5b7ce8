// Session: a merged read (a scatter plan) in the extended protocol. The shards run the plan's SQL
// with the client's parameters and return text; the merge compares text values, so the client
// must ask for text result columns (binary ones are refused with 0A000 for now).
#include "common/bytes.h"
#include "session/session.h"

namespace sw::session {
namespace {

// The Bind's parameter part (format codes and values, after the statement name) and whether any
// result column is asked in binary. decode_bind checked the structure, so the counts are trusted.
struct BindParts {
  std::string_view parameters;
  bool binary_results = false;
};

BindParts split_bind(std::string_view rest) {
  BindParts parts;
  size_t at = 0;
  auto int16_at = [&](size_t offset) {
    return offset + 2 <= rest.size() ? load_be16(rest.data() + offset) : 0;
  };
  at += 2 + 2 * static_cast<size_t>(int16_at(at));  // parameter format codes
  const size_t values = int16_at(at);
  at += 2;
  for (size_t i = 0; i < values && at + 4 <= rest.size(); ++i) {
    const auto length = static_cast<int32_t>(load_be32(rest.data() + at));
    at += 4 + (length > 0 ? static_cast<size_t>(length) : 0);
  }
  parts.parameters = rest.substr(0, std::min(at, rest.size()));
  const size_t results = int16_at(at);
  for (size_t i = 0; i < results; ++i)
    parts.binary_results = parts.binary_results || int16_at(at + 2 + 2 * i) != 0;
  return parts;
}

}  // namespace

Session::Start Session::start_extended_merge(const ExtendedBatch& bound, const router::Route& route,
                                             size_t consumed, bool describe_portal) {
  const BindParts bind = split_bind(bound.bind.rest);
  if (bind.binary_results) {
    refuse_request(Status::client(
        "0A000", "a read of sharded table " + route.table + " whose rows are merged across shards (" +
                     route.merge->kind_name() +
                     ") returns text result columns only in the extended protocol; ask for the text format"));
    return Start::Answered;
  }
  Status error;
  std::vector<Fanout::Target> targets;
  if (!fanout_targets(route, &targets, &error)) {
    refuse_request(error);
    return Start::Answered;
  }
  MergeFanout::Extended extended;
  extended.types = bound.statement().types;
  extended.parameters = std::string(bind.parameters);
  extended.parse_complete = bound.client_parsed;
  extended.describe = describe_portal;
  return start_merge(std::move(targets), consumed, route, &extended);
}

}  // namespace sw::session
