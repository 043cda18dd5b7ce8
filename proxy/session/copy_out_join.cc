#include "session/copy_out_join.h"

#include "wire/message_writer.h"

namespace sw::session {
namespace {

// PGCOPY\n\377\r\n\0, flags (int32), header extension length (int32).
constexpr std::string_view kSignature("PGCOPY\n\377\r\n\0", 11);
constexpr size_t kHeaderBytes = 19;

void write_copy_data(std::string& out, std::string_view payload) {
  if (!payload.empty()) wire::MessageWriter(out).begin('d').bytes(payload).end();
}

uint32_t be32(std::string_view bytes) {
  return (static_cast<uint32_t>(static_cast<unsigned char>(bytes[0])) << 24) |
         (static_cast<uint32_t>(static_cast<unsigned char>(bytes[1])) << 16) |
         (static_cast<uint32_t>(static_cast<unsigned char>(bytes[2])) << 8) |
         static_cast<uint32_t>(static_cast<unsigned char>(bytes[3]));
}

}  // namespace

Status CopyOutJoin::on_message(size_t leg, char type, std::string_view frame, std::string_view body,
                               std::string& out) {
  if (leg != leg_) {
    if (leg < leg_ || held_.size() > 0) return Status::proxy("XX000", "COPY legs fed out of order");
    leg_ = leg;
    leg_started_ = false;
  }
  switch (type) {
    case 'H': {
      const bool binary = !body.empty() && body[0] == 1;
      if (!response_sent_) {
        response_sent_ = true;
        binary_ = binary;
        out.append(frame);
      } else if (binary != binary_) {
        return Status::server("08P01", "the shards answered COPY in different formats");
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
    if (payload.size() < kHeaderBytes || payload.substr(0, kSignature.size()) != kSignature)
      return Status::server("08P01", "a shard's binary COPY does not start with the PGCOPY header");
    const uint64_t header = kHeaderBytes + be32(payload.substr(15, 4));
    if (payload.size() < header)
      return Status::server("08P01", "a shard's binary COPY header extension is cut short");
    payload.remove_prefix(static_cast<size_t>(header));
  }
  write_copy_data(out, held_);
  held_.assign(payload);
  return Status::ok();
}

Status CopyOutJoin::copy_done(size_t leg, std::string& out) {
  const bool last = leg + 1 >= legs_;
  if (binary_) {
    if (!last) {
      if (held_.size() < 2 || held_[held_.size() - 2] != '\xff' || held_[held_.size() - 1] != '\xff')
        return Status::server("08P01", "a shard's binary COPY does not end with the -1 trailer");
      held_.resize(held_.size() - 2);
    }
    write_copy_data(out, held_);
    held_.clear();
  }
  if (last) wire::MessageWriter(out).begin('c').end();
  return Status::ok();
}

}  // namespace sw::session
