#include "session/copy_out_join.h"

#include "session/result_shape.h"
#include "wire/copy_rows.h"
#include "wire/message_writer.h"
#include "wire/messages.h"

namespace sw::session {
namespace {

void write_copy_data(std::string& out, std::string_view payload) {
  if (!payload.empty()) wire::MessageWriter(out).begin('d').bytes(payload).end();
}

}  // namespace

std::string CopyOutJoin::shard(size_t leg) const {
  return leg < shards_.size() ? shards_[leg] : "of leg " + std::to_string(leg);
}

Status CopyOutJoin::on_message(size_t leg, char type, std::string_view frame, std::string_view body,
                               std::string& out) {
  if (leg != leg_) {
    if (leg < leg_ || held_.size() > 0) return Status::proxy("XX000", "COPY legs fed out of order");
    leg_ = leg;
    leg_started_ = false;
  }
  switch (type) {
    case 'H': {
      auto response = wire::decode_copy_response(body);
      if (!response) return response.status();
      const bool binary = response->binary;
      if (!response_sent_) {
        response_sent_ = true;
        binary_ = binary;
        columns_ = response->columns;
        out.append(frame);
      } else if (binary != binary_) {
        return Status::server("08P01", "the shards answered COPY in different formats");
      } else if (response->columns != columns_) {
        return copy_columns_mismatch(shard(0), columns_, shard(leg), response->columns);
      }
      return Status::ok();
    }
    case 'd': return copy_data(leg, frame, body, out);
    case 'c': return copy_done(leg, out);
    default: return Status::proxy("XX000", "not a COPY message");
  }
}

Status CopyOutJoin::copy_data(size_t leg, std::string_view frame, std::string_view body, std::string& out) {
  const bool first = !leg_started_;
  leg_started_ = true;
  if (!binary_) {
    if (!(first && skip_headers_ && leg > 0)) out.append(frame);
    return Status::ok();
  }
  std::string_view payload = body;
  if (first && leg > 0) {
    const auto header = wire::binary_copy_header_size(payload);
    if (!header) {
      return Status::server("08P01", "a shard's binary COPY does not start with a whole PGCOPY header");
    }
    payload.remove_prefix(*header);
  }
  write_copy_data(out, held_);
  held_.assign(payload);
  return Status::ok();
}

Status CopyOutJoin::copy_done(size_t leg, std::string& out) {
  const bool last = leg + 1 >= legs_;
  if (binary_) {
    if (!last) {
      if (!std::string_view(held_).ends_with(wire::kBinaryCopyTrailer))
        return Status::server("08P01", "a shard's binary COPY does not end with the -1 trailer");
      held_.resize(held_.size() - wire::kBinaryCopyTrailer.size());
    }
    write_copy_data(out, held_);
    held_.clear();
  }
  if (last) wire::MessageWriter(out).begin('c').end();
  return Status::ok();
}

}  // namespace sw::session
