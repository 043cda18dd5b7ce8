#include "session/prepare_transaction_batch.h"

#include "parser/sql_scan.h"
#include "wire/messages.h"

namespace sw::session {
namespace {

using wire::FrameStatus;

bool is_prepare_transaction(std::string_view sql) {
  size_t at = 0;
  return parser::read_keyword(sql, &at, "prepare") && parser::read_keyword(sql, &at, "transaction");
}

}  // namespace

PrepareTransactionBatch find_prepare_transaction_batch(std::string_view input, const wire::Limits& limits) {
  PrepareTransactionBatch batch;
  auto first = wire::read_frame(input, wire::Sender::Client, limits);
  if (first.status != FrameStatus::Complete || first.frame.type != 'P') return batch;
  auto parse = wire::decode_parse(first.frame.body);
  if (!parse || !is_prepare_transaction(parse->query)) return batch;
  size_t offset = first.frame.size;
  // Each step: the message types it may be, and whether it may be left out.
  struct Step {
    char type;
    char describes;  // a Describe's kind; 0 for another type
    bool optional;
  };
  static constexpr Step kSteps[] = {
      {'D', 'S', true}, {'B', 0, false}, {'D', 'P', true}, {'E', 0, false}, {'S', 0, false}};
  for (const Step& step : kSteps) {
    auto next = wire::read_frame(input.substr(offset), wire::Sender::Client, limits);
    if (next.status == FrameStatus::NeedMore) {
      batch.kind = PrepareTransactionBatch::Kind::NeedMore;
      return batch;
    }
    if (next.status != FrameStatus::Complete) return batch;
    const wire::Frame& frame = next.frame;
    bool matches = frame.type == step.type;
    if (matches && frame.type == 'D') {
      auto target = wire::decode_target(frame.body);
      matches = target && target->kind == step.describes &&
                (step.describes != 'S' || target->name == parse->statement);
    } else if (matches && frame.type == 'B') {
      auto bind = wire::decode_bind(frame.body);
      matches = bind && bind->statement == parse->statement;
    }
    if (!matches) {
      if (step.optional) continue;
      return batch;
    }
    offset += frame.size;
  }
  batch.kind = PrepareTransactionBatch::Kind::Found;
  batch.size = offset;
  batch.text = parse->query;
  return batch;
}

}  // namespace sw::session
