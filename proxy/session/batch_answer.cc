// BatchAnswer: a batch's answers from several shards in the client's order (docs/architecture.md
// §5.11).
#include "session/batch_answer.h"

#include <algorithm>
#include <utility>

#include "wire/messages.h"

namespace sw::session {
namespace {

// A tag that says rows were written: `INSERT 0 n`, `UPDATE n`, `DELETE n`, `MERGE n`, n > 0.
bool writes_rows(std::string_view tag) {
  for (std::string_view verb : {"INSERT ", "UPDATE ", "DELETE ", "MERGE "}) {
    if (tag.substr(0, verb.size()) != verb) continue;
    const std::string_view count = tag.substr(tag.rfind(' ') + 1);
    return !count.empty() && count != "0";
  }
  return false;
}

}  // namespace

BatchAnswer::BatchAnswer(std::vector<int> unit_part, std::vector<bool> unit_parsed)
    : unit_part_(std::move(unit_part)), unit_parsed_(std::move(unit_parsed)) {
  size_t parts = 0;
  for (int part : unit_part_) parts = std::max(parts, static_cast<size_t>(part) + 1);
  answers_.resize(parts);
  open_.assign(parts, false);
  wrote_.assign(parts, false);
}

Status BatchAnswer::on_message(size_t part, char type, std::string_view frame) {
  if (part >= answers_.size()) return Status::proxy("XX000", "a batch answer for an unknown part");
  if (held_ + frame.size() > kMaxHeldBytes) {
    return Status::client("54000", "the answers of a batch run on several shards are over " +
                                       std::to_string(kMaxHeldBytes >> 20) +
                                       " MiB, which shardwire holds until every shard answered; the batch "
                                       "was rolled back on every shard (send fewer rows per Sync)");
  }
  held_ += frame.size();
  std::vector<std::string>& answers = answers_[part];
  if (type == '2') {
    if (open_[part]) return Status::server("08P01", "BindComplete before the previous Execute completed");
    answers.emplace_back();
    open_[part] = true;
  } else if (!open_[part]) {
    return Status::server("08P01",
                          "an Execute's answer ('" + std::string(1, type) + "') before its BindComplete");
  }
  answers.back().append(frame);
  if (type == 'C') {
    open_[part] = false;
    auto tag = wire::decode_command_complete(frame.substr(5));
    if (tag && writes_rows(*tag)) wrote_[part] = true;
  }
  return Status::ok();
}

std::string BatchAnswer::answered() const {
  std::string out;
  std::vector<size_t> next(answers_.size(), 0);
  for (size_t unit = 0; unit < unit_part_.size(); ++unit) {
    const auto part = static_cast<size_t>(unit_part_[unit]);
    const size_t index = next[part]++;
    const bool done = index < answers_[part].size() && !(open_[part] && index + 1 == answers_[part].size());
    if (!done) break;
    if (unit_parsed_[unit]) wire::encode_parse_complete(out);
    out += answers_[part][index];
  }
  return out;
}

bool BatchAnswer::complete() const {
  std::vector<size_t> count(answers_.size(), 0);
  for (int part : unit_part_) ++count[static_cast<size_t>(part)];
  for (size_t part = 0; part < answers_.size(); ++part)
    if (open_[part] || answers_[part].size() != count[part]) return false;
  return true;
}

}  // namespace sw::session
