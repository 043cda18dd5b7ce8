// CopyIn: the client's side. Its CopyData is split into rows (wire::CopyRowSplitter); each row
// goes, bytes unchanged, to the shard of its key's bucket; headers and the binary trailer go to
// every shard. Rows are batched per shard into CopyData messages of up to kBatchBytes.
#include <cstdio>

#include "session/copy_in.h"
#include "wire/message_writer.h"
#include "wire/messages.h"

namespace sw::session {
namespace {

constexpr size_t kBatchBytes = size_t{64} * 1024;

}  // namespace

bool CopyIn::accepts_client_input() const {
  if (phase_ == Phase::Failed) return true;
  if (phase_ != Phase::Streaming) return false;
  for (size_t i = 0; i < servers_.size(); ++i) {
    pool::Backend* backend = servers_.backend(i);
    if (backend != nullptr && backend->connection().over_high_water()) return false;
  }
  return true;
}

void CopyIn::on_client_message(char type, std::string_view body) {
  const bool ends = type != 'd' && type != 'H' && type != 'S';
  if (phase_ == Phase::Failed) {
    if (!ends) return;  // PostgreSQL skips the rest of a failed copy too
    client_ended_ = true;
    phase_ = Phase::Done;
    std::string out;
    ready_for_query(out);
    callbacks_.write_client(out);
    callbacks_.done();
    return;
  }
  if (phase_ != Phase::Streaming) return;
  client_ended_ = ends;
  switch (type) {
    case 'd':
      if (setup_.every_shard) {
        to_every_leg(body);
        for (uint64_t& sent : rows_sent_) sent = 1;  // written: its COPY n counts the rows
        return;
      }
      splitter_.feed(body);
      split(false);
      return;
    case 'c':
      if (!setup_.every_shard) split(true);
      if (phase_ == Phase::Streaming) end_copies();
      return;
    case 'f': {
      const std::string_view message = body.substr(0, body.find('\0'));
      fail(Status::client("57014", "COPY from stdin failed: " + std::string(message)));
      return;
    }
    case 'H':
    case 'S': return;
    default: {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned>(static_cast<unsigned char>(type)));
      fail(
          Status::client("08P01", std::string("unexpected message type ") + hex + " during COPY from stdin"));
      return;
    }
  }
}

void CopyIn::split(bool end_of_data) {
  for (;;) {
    const wire::CopyItem& item = splitter_.next(end_of_data);
    switch (item.part) {
      case wire::CopyPart::NeedMore: return;
      case wire::CopyPart::Header: to_every_leg(item.raw); break;
      case wire::CopyPart::Row:
        if (Status routed = route_row(item); !routed) {
          fail(row_error(routed, item.line));
          return;
        }
        break;
      case wire::CopyPart::End:
        if (!data_ended_) to_every_leg(item.raw);  // the binary trailer (text: nothing)
        data_ended_ = true;
        return;
      case wire::CopyPart::Error: fail(row_error(item.error, item.line)); return;
    }
  }
}

Status CopyIn::route_row(const wire::CopyItem& row) {
  const router::TableRule& rule = setup_.rule;
  if (row.key_null) {
    return Status::client("23502", "null value in shard key column \"" + rule.key + "\" of sharded table " +
                                       rule.config_name + ": every row needs a key to find its shard");
  }
  const router::Directory& directory = *setup_.directory;
  auto bucket = setup_.plan.options.format == wire::CopyFormat::Binary
                    ? router::bucket_of_binary_value(rule.key_type, row.key, directory.bucket_count())
                    : router::bucket_of_text_value(rule.key_type, row.key, directory.bucket_count());
  if (!bucket) return bucket.status();
  const uint16_t shard = directory.bucket(bucket.value()).shard;
  if (shard >= batches_.size()) return Status::proxy("XX000", "bucket's shard is outside the COPY's shards");
  batches_[shard].append(row.raw);
  ++rows_sent_[shard];
  record_line(lines_[shard], row.line);
  if (batches_[shard].size() >= kBatchBytes) write_pending(shard);
  return Status::ok();
}

// PostgreSQL's CONTEXT of a COPY error, in the message: the table, the row's line and the key.
Status CopyIn::row_error(const Status& why, uint64_t line) const {
  Status out = why;
  out.message += " (COPY " + setup_.rule.config_name + ", line " + std::to_string(line) + ", column " +
                 setup_.rule.key + "; nothing was written)";
  return out;
}

// Past this many bytes of a leg's line record (tens of millions of rows) lines are no longer
// recorded, and a shard's error past them keeps the shard's line.
constexpr size_t kMaxLineRecord = size_t{64} << 20;

void CopyIn::record_line(RowLines& lines, uint64_t line) {
  if (lines.deltas.size() >= kMaxLineRecord) return;
  uint64_t delta = line - lines.last;
  lines.last = line;
  while (delta >= 0x80) {
    lines.deltas.push_back(static_cast<char>((delta & 0x7f) | 0x80));
    delta >>= 7;
  }
  lines.deltas.push_back(static_cast<char>(delta));
}

// The client's line of the row a shard counts as `shard_line` in its own stream (which has the
// text header first when there is one: the header goes to every shard).
uint64_t CopyIn::client_line(const RowLines& lines, uint64_t shard_line) const {
  const bool text_header =
      setup_.plan.options.header && setup_.plan.options.format != wire::CopyFormat::Binary;
  const uint64_t first_row_line = text_header ? 2 : 1;
  if (shard_line < first_row_line) return shard_line;
  uint64_t row = shard_line - first_row_line;  // 0-based among the rows sent to this leg
  uint64_t line = 0;
  size_t at = 0;
  for (;; --row) {
    uint64_t delta = 0;
    for (int shift = 0;; shift += 7) {
      if (at >= lines.deltas.size()) return 0;
      const auto byte = static_cast<unsigned char>(lines.deltas[at++]);
      delta |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) break;
    }
    line += delta;
    if (row == 0) return line;
  }
}

// A shard's ErrorResponse with its CONTEXT ("COPY t, line N, column c: ...") naming the client's
// line instead of the line within that shard's stream.
std::string CopyIn::with_client_line(size_t index, const Message& error) const {
  auto fields = wire::decode_error_field_list(error.body);
  if (setup_.every_shard || !fields) return std::string(error.frame);
  std::string context;  // the rewritten CONTEXT, which fields[i].value then views
  for (wire::ErrorField& field : *fields) {
    const size_t line_at = field.value.find(", line ");
    if (field.code != 'W' || line_at == std::string_view::npos) continue;
    context.assign(field.value);
    const size_t digits = line_at + 7;
    size_t stop = digits;
    uint64_t shard_line = 0;
    while (stop < context.size() && context[stop] >= '0' && context[stop] <= '9')
      shard_line = shard_line * 10 + static_cast<uint64_t>(context[stop++] - '0');
    if (const uint64_t line = client_line(lines_[index], shard_line); stop > digits && line != 0)
      context.replace(digits, stop - digits, std::to_string(line));
    field.value = context;
    break;  // PostgreSQL sends one CONTEXT
  }
  std::string out;
  wire::encode_error_field_list(out, error.type, *fields);
  return out;
}

void CopyIn::to_every_leg(std::string_view bytes) {
  if (bytes.empty()) return;
  for (std::string& batch : batches_) batch.append(bytes);
}

void CopyIn::write_pending(size_t index) {
  std::string& batch = batches_[index];
  if (batch.empty() || servers_.backend(index) == nullptr) return;
  std::string out;
  out.reserve(batch.size() + 5);
  wire::MessageWriter(out).begin('d').bytes(batch).end();
  servers_.write(index, out);
  batch.clear();
}

void CopyIn::flush() {
  if (phase_ != Phase::Streaming) return;
  for (size_t i = 0; i < batches_.size(); ++i) write_pending(i);
}

}  // namespace sw::session
