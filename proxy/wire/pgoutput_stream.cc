// What surrounds the pgoutput messages in a replication stream: the CopyData envelope of
// START_REPLICATION (XLogData, primary keepalive, standby status update; PostgreSQL 15
// "Streaming Replication Protocol"), and the relation descriptions that change messages refer to.
#include "wire/pgoutput.h"

#include <string>

#include "common/bytes.h"
#include "wire/byte_reader.h"

namespace sw::wire::pgoutput {
namespace {

constexpr size_t kXLogDataHeader = 1 + 8 + 8 + 8;  // 'w', wal start, wal end, send time
constexpr size_t kKeepaliveSize = 1 + 8 + 8 + 1;   // 'k', wal end, send time, reply flag

void append_be64(std::string& out, uint64_t v) {
  append_be32(out, static_cast<uint32_t>(v >> 32));
  append_be32(out, static_cast<uint32_t>(v));
}

Status malformed(const char* name, const std::string& why) {
  return Status::server("08P01", std::string("invalid replication ") + name + " message: " + why);
}

}  // namespace

Result<ReplicationMessage> decode_replication_message(std::string_view copy_data) {
  if (copy_data.empty()) return malformed("CopyData", "empty payload");
  switch (copy_data[0]) {
    case 'w': {
      if (copy_data.size() < kXLogDataHeader) {
        return malformed("XLogData", "header needs " + std::to_string(kXLogDataHeader) + " bytes, got " +
                                         std::to_string(copy_data.size()));
      }
      XLogData m;
      ByteReader in(copy_data.substr(1));  // the size is checked: no read below can fail
      in.u64(m.wal_start);
      in.u64(m.wal_end);
      in.i64(m.send_time);
      m.data = in.rest();
      return ReplicationMessage(m);
    }
    case 'k': {
      if (copy_data.size() != kKeepaliveSize) {
        return malformed("primary keepalive", "expected " + std::to_string(kKeepaliveSize) + " bytes, got " +
                                                  std::to_string(copy_data.size()));
      }
      const auto reply = static_cast<uint8_t>(copy_data[17]);
      if (reply > 1) {
        return malformed("primary keepalive", "reply flag " + std::to_string(reply) + " is neither 0 nor 1");
      }
      PrimaryKeepalive m;
      ByteReader in(copy_data.substr(1));  // the size is checked: no read below can fail
      in.u64(m.wal_end);
      in.i64(m.send_time);
      m.reply_requested = reply == 1;
      return ReplicationMessage(m);
    }
    default: {
      const auto type = static_cast<uint8_t>(copy_data[0]);
      const std::string shown = type >= 0x20 && type < 0x7f ? std::string("'") + static_cast<char>(type) + "'"
                                                            : "byte " + std::to_string(type);
      return malformed("CopyData", "unknown message type " + shown);
    }
  }
}

void encode_standby_status_update(std::string& out, const StandbyStatusUpdate& update) {
  out.push_back('r');
  append_be64(out, update.written);
  append_be64(out, update.flushed);
  append_be64(out, update.applied);
  append_be64(out, static_cast<uint64_t>(update.client_time));
  out.push_back(update.reply_requested ? '\1' : '\0');
}

std::optional<size_t> Relation::column_index(std::string_view column_name) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == column_name) return i;
  }
  return std::nullopt;
}

void RelationCache::put(Relation relation) {
  const uint32_t oid = relation.oid;
  by_oid_.insert_or_assign(oid, std::move(relation));
}

Result<const Relation*> RelationCache::find(uint32_t oid) const {
  const auto it = by_oid_.find(oid);
  if (it == by_oid_.end()) {
    return Status::server("08P01", "pgoutput change for relation oid " + std::to_string(oid) +
                                       " that no Relation message described");
  }
  return &it->second;
}

Result<const Relation*> RelationCache::find_for_tuple(uint32_t oid, const TupleData& tuple) const {
  Result<const Relation*> relation = find(oid);
  if (!relation.is_ok()) return relation;
  const Relation& rel = **relation;
  if (tuple.size() != rel.columns.size()) {
    return Status::server("08P01", "pgoutput tuple for " + rel.namespace_name + "." + rel.name + " has " +
                                       std::to_string(tuple.size()) + " columns, its Relation message " +
                                       std::to_string(rel.columns.size()));
  }
  return relation;
}

}  // namespace sw::wire::pgoutput
