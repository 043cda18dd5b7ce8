// Decoder for a logical replication stream from PostgreSQL 15's pgoutput plugin (proto_version 1
// and 2), for the bucket mover's applier (docs/architecture.md §8.4). Pure: no I/O, no clocks, no exceptions.
//
// Two layers:
//  * the replication protocol: the CopyData payloads of START_REPLICATION (XLogData 'w', primary
//    keepalive 'k') and the standby status update 'r' the client sends back;
//  * the pgoutput messages carried inside XLogData (Begin, Commit, Origin, Relation, Type, Insert,
//    Update, Delete, Truncate, logical decoding Message, and the protocol-2 stream messages).
//
// Decoding contract: every length and count is checked against the bytes present before it is
// trusted; a string needs its NUL inside the payload; a field that runs past the end, bytes left
// over after the last field, an unknown message type or column kind, and flag bits PostgreSQL 15
// never sets are all errors (fail loudly rather than apply a change whose meaning may differ).
// Errors are Status::server("08P01", "invalid pgoutput <Kind> message: <reason>"). Decoded
// messages own their strings, except XLogData::data, which views the payload passed in.
//
// Streaming (proto_version 2, streaming 'on') is decoded: StreamStart .. StreamStop brackets a
// block whose Relation/Type/Insert/Update/Delete/Truncate/Message carry the streamed xid (in
// `stream_xid`); StreamCommit / StreamAbort end a streamed transaction. Whether the xid field is
// present depends on that bracket, so callers pass `in_stream_block`, or use `Decoder`, which
// tracks it. Two-phase messages (proto_version 3: 'b', 'P', 'K', 'r', 'p') are rejected.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "common/status.h"

namespace sw::wire::pgoutput {

using Lsn = uint64_t;         // XLogRecPtr
using PgTimestamp = int64_t;  // TimestampTz: microseconds since 2000-01-01 00:00:00 UTC

// Microseconds from 1970-01-01 to 2000-01-01.
constexpr int64_t kPgEpochUnixMicros = 946'684'800'000'000;
constexpr PgTimestamp pg_timestamp_from_unix_micros(int64_t unix_micros) {
  return unix_micros - kPgEpochUnixMicros;
}
constexpr int64_t unix_micros_from_pg_timestamp(PgTimestamp ts) { return ts + kPgEpochUnixMicros; }

// ---- replication protocol (CopyData payloads of START_REPLICATION) ----------------------------

struct XLogData {     // 'w'
  Lsn wal_start = 0;  // WAL position of the start of `data`
  Lsn wal_end = 0;    // current end of WAL on the server
  PgTimestamp send_time = 0;
  std::string_view data;  // one pgoutput message; views the payload given to the decoder
};

struct PrimaryKeepalive {  // 'k'
  Lsn wal_end = 0;
  PgTimestamp send_time = 0;
  bool reply_requested = false;  // answer with a standby status update at once
};

using ReplicationMessage = std::variant<XLogData, PrimaryKeepalive>;
Result<ReplicationMessage> decode_replication_message(std::string_view copy_data);

struct StandbyStatusUpdate {  // 'r'
  Lsn written = 0;            // PostgreSQL expects "last byte + 1" positions; passed through as is
  Lsn flushed = 0;            // the slot's confirmed_flush: WAL before it may be recycled
  Lsn applied = 0;
  PgTimestamp client_time = 0;
  bool reply_requested = false;
};
// Appends the 34-byte CopyData payload (for PQputCopyData; no 'd' frame header).
void encode_standby_status_update(std::string& out, const StandbyStatusUpdate& update);

// ---- pgoutput messages --------------------------------------------------------------------------

enum class ColumnKind : uint8_t {
  Null,            // 'n'
  UnchangedToast,  // 'u': an unchanged TOASTed value; not sent, keep the target's value
  Text,            // 't': the type's text output
  Binary,          // 'b': the type's send format (subscription option binary 'true')
};
struct ColumnValue {
  ColumnKind kind = ColumnKind::Null;
  std::optional<std::string> value;  // set exactly for Text and Binary
};
using TupleData = std::vector<ColumnValue>;  // one entry per column of the Relation, in order

struct Begin {        // 'B'
  Lsn final_lsn = 0;  // LSN of the commit record
  PgTimestamp commit_time = 0;
  uint32_t xid = 0;
};
struct Commit {  // 'C' (flags must be 0)
  Lsn commit_lsn = 0;
  Lsn end_lsn = 0;  // end of the commit record: where a restart resumes
  PgTimestamp commit_time = 0;
};
struct Origin {        // 'O'
  Lsn commit_lsn = 0;  // on the origin server
  std::string name;
};
struct RelationColumn {
  bool key = false;  // part of the replica identity (every column for FULL)
  std::string name;
  uint32_t type_oid = 0;
  int32_t type_modifier = -1;
};
struct Relation {  // 'R'
  std::optional<uint32_t> stream_xid;
  uint32_t oid = 0;
  std::string namespace_name;  // "pg_catalog" when sent as "" (as PostgreSQL reads it)
  std::string name;
  char replica_identity = 'd';          // relreplident: 'd' default, 'n' nothing, 'f' full, 'i' index
  std::vector<RelationColumn> columns;  // published, non-generated, non-dropped columns, in order

  std::optional<size_t> column_index(std::string_view column_name) const;
};
struct Type {  // 'Y'
  std::optional<uint32_t> stream_xid;
  uint32_t oid = 0;
  std::string namespace_name;  // "pg_catalog" when sent as ""
  std::string name;
};

enum class OldTuple : uint8_t {
  None,  // Update without old values: the replica identity did not change
  Key,   // 'K': replica identity columns set, every other column Null
  Full,  // 'O': the whole old row (REPLICA IDENTITY FULL)
};
struct Insert {  // 'I'
  std::optional<uint32_t> stream_xid;
  uint32_t relation_oid = 0;
  TupleData new_tuple;
};
struct Update {  // 'U'
  std::optional<uint32_t> stream_xid;
  uint32_t relation_oid = 0;
  OldTuple old_kind = OldTuple::None;
  TupleData old_tuple;  // empty when old_kind is None
  TupleData new_tuple;  // may hold UnchangedToast columns
};
struct Delete {  // 'D'
  std::optional<uint32_t> stream_xid;
  uint32_t relation_oid = 0;
  OldTuple old_kind = OldTuple::Key;  // Key or Full
  TupleData old_tuple;
};
struct Truncate {  // 'T'
  std::optional<uint32_t> stream_xid;
  bool cascade = false;
  bool restart_identity = false;
  std::vector<uint32_t> relation_oids;
};
struct DecodingMessage {  // 'M' (pg_logical_emit_message; sent with option messages 'true')
  std::optional<uint32_t> stream_xid;
  bool transactional = false;
  Lsn lsn = 0;
  std::string prefix;
  std::string content;
};
struct StreamStart {  // 'S'
  uint32_t xid = 0;
  bool first_segment = false;
};
struct StreamStop {};  // 'E'
struct StreamCommit {  // 'c' (flags must be 0)
  uint32_t xid = 0;
  Lsn commit_lsn = 0;
  Lsn end_lsn = 0;
  PgTimestamp commit_time = 0;
};
struct StreamAbort {  // 'A': subxid == xid aborts the whole streamed transaction
  uint32_t xid = 0;
  uint32_t subxid = 0;
};

using Message = std::variant<Begin, Commit, Origin, Relation, Type, Insert, Update, Delete, Truncate,
                             DecodingMessage, StreamStart, StreamStop, StreamCommit, StreamAbort>;

// Decodes one pgoutput message (XLogData::data). `in_stream_block`: between StreamStart and
// StreamStop, where change messages carry an xid; there Begin, Commit, StreamStart, StreamCommit
// and StreamAbort are errors, outside it StreamStop is.
Result<Message> decode_message(std::string_view data, bool in_stream_block = false);

// decode_message that tracks the stream bracket across messages. A failed decode leaves the
// state unchanged.
class Decoder {
 public:
  Result<Message> decode(std::string_view data);
  bool in_stream_block() const { return in_stream_block_; }

 private:
  bool in_stream_block_ = false;
};

// ---- relation descriptions ----------------------------------------------------------------------

// oid -> the latest Relation message for it. PostgreSQL sends a Relation before the first change
// to a table on a connection and again after its schema changes, so a change is interpreted with
// the description most recently put.
class RelationCache {
 public:
  void put(Relation relation);  // adds or replaces
  // Error (08P01) for an oid no Relation message described. The pointer stays valid until the
  // next put() for the same oid or clear().
  Result<const Relation*> find(uint32_t oid) const;
  // find(), and `tuple` has exactly one value per column of the relation.
  Result<const Relation*> find_for_tuple(uint32_t oid, const TupleData& tuple) const;
  size_t size() const { return by_oid_.size(); }
  void clear() { by_oid_.clear(); }

 private:
  std::unordered_map<uint32_t, Relation> by_oid_;
};

}  // namespace sw::wire::pgoutput
