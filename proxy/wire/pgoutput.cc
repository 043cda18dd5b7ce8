// pgoutput message decoding (see pgoutput.h for the contract). Field layouts follow PostgreSQL
// 15's "Logical Replication Message Formats".
#include "wire/pgoutput.h"

#include "wire/byte_reader.h"

namespace sw::wire::pgoutput {
namespace {

constexpr uint32_t kMaxLength = 0x7fffffffu;  // lengths are int32 on the wire

// ByteReader that names the field a failure was in. The first failure sticks: later reads fail
// without consuming anything, and why() says what went wrong first.
class Reader {
 public:
  explicit Reader(std::string_view data) : in_(data) {}

  bool u8(uint8_t& out, const char* what) { return ok() && past_end_unless(in_.u8(out), what); }
  bool u16(uint16_t& out, const char* what) { return ok() && past_end_unless(in_.u16(out), what); }
  bool u32(uint32_t& out, const char* what) { return ok() && past_end_unless(in_.u32(out), what); }
  bool i32(int32_t& out, const char* what) { return ok() && past_end_unless(in_.i32(out), what); }
  bool u64(uint64_t& out, const char* what) { return ok() && past_end_unless(in_.u64(out), what); }
  bool i64(int64_t& out, const char* what) { return ok() && past_end_unless(in_.i64(out), what); }
  bool cstr(std::string& out, const char* what) {
    if (!ok()) return false;
    std::string_view s;
    if (!in_.cstr(s)) return fail(std::string(what) + " has no terminator");
    out.assign(s);
    return true;
  }
  bool bytes(uint64_t n, std::string& out, const char* what) {
    std::string_view s;
    if (!ok() || !past_end_unless(in_.bytes(n, s), what)) return false;
    out.assign(s);
    return true;
  }

  bool fail(std::string why) {
    if (why_.empty()) why_ = std::move(why);
    return false;
  }
  bool ok() const { return why_.empty(); }
  const std::string& why() const { return why_; }
  size_t remaining() const { return in_.remaining(); }

 private:
  // Called only while ok(), after a read that may have failed.
  bool past_end_unless(bool read, const char* what) {
    return read || fail(std::string(what) + " runs past the end");
  }

  ByteReader in_;
  std::string why_;
};

std::string describe_byte(uint8_t b) {
  if (b >= 0x20 && b < 0x7f) return std::string("'") + static_cast<char>(b) + "'";
  return "byte " + std::to_string(b);
}

const char* message_name(char type) {
  switch (type) {
    case 'B': return "Begin";
    case 'C': return "Commit";
    case 'O': return "Origin";
    case 'R': return "Relation";
    case 'Y': return "Type";
    case 'I': return "Insert";
    case 'U': return "Update";
    case 'D': return "Delete";
    case 'T': return "Truncate";
    case 'M': return "Logical Message";
    case 'S': return "Stream Start";
    case 'E': return "Stream Stop";
    case 'c': return "Stream Commit";
    case 'A': return "Stream Abort";
    default: return nullptr;
  }
}

Status malformed(char type, const std::string& why) {
  const char* name = message_name(type);
  return Status::server("08P01", std::string("invalid pgoutput ") + (name ? name : "") +
                                     (name ? " message: " : "message: ") + why);
}

// The xid that change messages carry only inside a stream block.
void read_stream_xid(Reader& r, bool in_stream_block, std::optional<uint32_t>& xid) {
  if (!in_stream_block) return;
  uint32_t v = 0;
  if (r.u32(v, "streamed transaction xid")) xid = v;
}

void read_namespace(Reader& r, std::string& out) {
  if (r.cstr(out, "namespace") && out.empty()) out = "pg_catalog";
}

// TupleData: Int16 column count, then per column a kind byte and, for 't'/'b', an Int32 length
// and that many bytes.
void read_tuple(Reader& r, const char* which, TupleData& out) {
  uint16_t count = 0;
  if (!r.u16(count, "column count")) return;
  if (count > r.remaining()) {  // every column takes at least its kind byte
    r.fail(std::string(which) + " declares " + std::to_string(count) + " columns but " +
           std::to_string(r.remaining()) + " bytes follow");
    return;
  }
  out.reserve(count);
  for (uint32_t i = 0; i < count && r.ok(); ++i) {
    auto column = [&] { return std::string(which) + " column " + std::to_string(i + 1); };
    uint8_t kind = 0;
    if (!r.u8(kind, "column kind")) return;
    ColumnValue& v = out.emplace_back();
    switch (kind) {
      case 'n': v.kind = ColumnKind::Null; break;
      case 'u': v.kind = ColumnKind::UnchangedToast; break;
      case 't':
      case 'b': {
        v.kind = kind == 't' ? ColumnKind::Text : ColumnKind::Binary;
        uint32_t length = 0;
        if (!r.u32(length, "column length")) break;
        if (length > kMaxLength) {
          r.fail(column() + " has negative length");
          break;
        }
        if (length > r.remaining()) {
          r.fail(column() + " length " + std::to_string(length) + " runs past the end");
          break;
        }
        r.bytes(length, v.value.emplace(), "column value");
        break;
      }
      default: r.fail(column() + " has unknown kind " + describe_byte(kind));
    }
  }
}

// Reads the submessage byte that introduces a tuple.
char read_tuple_tag(Reader& r) {
  uint8_t tag = 0;
  return r.u8(tag, "tuple tag") ? static_cast<char>(tag) : '\0';
}

Begin read_begin(Reader& r) {
  Begin m;
  r.u64(m.final_lsn, "final LSN");
  r.i64(m.commit_time, "commit timestamp");
  r.u32(m.xid, "xid");
  return m;
}

// Commit and Stream Commit share the flags/LSN/LSN/timestamp tail.
template <typename CommitLike>
void read_commit_tail(Reader& r, CommitLike& m) {
  uint8_t flags = 0;
  if (r.u8(flags, "flags") && flags != 0) r.fail("unknown flags " + std::to_string(flags));
  r.u64(m.commit_lsn, "commit LSN");
  r.u64(m.end_lsn, "end LSN");
  r.i64(m.commit_time, "commit timestamp");
}

Origin read_origin(Reader& r) {
  Origin m;
  r.u64(m.commit_lsn, "origin commit LSN");
  r.cstr(m.name, "origin name");
  return m;
}

Relation read_relation(Reader& r, bool in_stream_block) {
  Relation m;
  read_stream_xid(r, in_stream_block, m.stream_xid);
  r.u32(m.oid, "relation oid");
  read_namespace(r, m.namespace_name);
  r.cstr(m.name, "relation name");
  uint8_t identity = 0;
  if (r.u8(identity, "replica identity")) m.replica_identity = static_cast<char>(identity);
  uint16_t count = 0;
  if (!r.u16(count, "column count")) return m;
  constexpr uint64_t kMinColumnBytes = 1 + 1 + 4 + 4;  // flags, "" name, type oid, typmod
  if (count * kMinColumnBytes > r.remaining()) {
    r.fail("declares " + std::to_string(count) + " columns but " + std::to_string(r.remaining()) +
           " bytes follow");
    return m;
  }
  m.columns.reserve(count);
  for (uint32_t i = 0; i < count && r.ok(); ++i) {
    RelationColumn& c = m.columns.emplace_back();
    uint8_t flags = 0;
    if (r.u8(flags, "column flags") && (flags & ~1u) != 0) {
      r.fail("column " + std::to_string(i + 1) + " has unknown flags " + std::to_string(flags));
    }
    c.key = (flags & 1u) != 0;
    r.cstr(c.name, "column name");
    r.u32(c.type_oid, "column type oid");
    r.i32(c.type_modifier, "column type modifier");
  }
  return m;
}

Type read_type(Reader& r, bool in_stream_block) {
  Type m;
  read_stream_xid(r, in_stream_block, m.stream_xid);
  r.u32(m.oid, "type oid");
  read_namespace(r, m.namespace_name);
  r.cstr(m.name, "type name");
  return m;
}

Insert read_insert(Reader& r, bool in_stream_block) {
  Insert m;
  read_stream_xid(r, in_stream_block, m.stream_xid);
  r.u32(m.relation_oid, "relation oid");
  const char tag = read_tuple_tag(r);
  if (r.ok() && tag != 'N') r.fail("expected new tuple 'N', got " + describe_byte(tag));
  read_tuple(r, "new tuple", m.new_tuple);
  return m;
}

Update read_update(Reader& r, bool in_stream_block) {
  Update m;
  read_stream_xid(r, in_stream_block, m.stream_xid);
  r.u32(m.relation_oid, "relation oid");
  char tag = read_tuple_tag(r);
  if (r.ok() && (tag == 'K' || tag == 'O')) {
    m.old_kind = tag == 'K' ? OldTuple::Key : OldTuple::Full;
    read_tuple(r, tag == 'K' ? "old key" : "old tuple", m.old_tuple);
    tag = read_tuple_tag(r);
  }
  if (r.ok() && tag != 'N') r.fail("expected new tuple 'N', got " + describe_byte(tag));
  read_tuple(r, "new tuple", m.new_tuple);
  return m;
}

Delete read_delete(Reader& r, bool in_stream_block) {
  Delete m;
  read_stream_xid(r, in_stream_block, m.stream_xid);
  r.u32(m.relation_oid, "relation oid");
  const char tag = read_tuple_tag(r);
  if (r.ok() && tag != 'K' && tag != 'O') {
    r.fail("expected old key 'K' or old tuple 'O', got " + describe_byte(tag));
  }
  m.old_kind = tag == 'O' ? OldTuple::Full : OldTuple::Key;
  read_tuple(r, tag == 'O' ? "old tuple" : "old key", m.old_tuple);
  return m;
}

Truncate read_truncate(Reader& r, bool in_stream_block) {
  constexpr uint8_t kCascade = 1, kRestartIdentity = 2;
  Truncate m;
  read_stream_xid(r, in_stream_block, m.stream_xid);
  uint32_t count = 0;
  uint8_t options = 0;
  r.u32(count, "relation count");
  if (r.u8(options, "options") && (options & ~(kCascade | kRestartIdentity)) != 0) {
    r.fail("unknown options " + std::to_string(options));
  }
  m.cascade = (options & kCascade) != 0;
  m.restart_identity = (options & kRestartIdentity) != 0;
  if (r.ok() && uint64_t{count} * 4 > r.remaining()) {
    r.fail("declares " + std::to_string(count) + " relations but " + std::to_string(r.remaining()) +
           " bytes follow");
  }
  if (!r.ok()) return m;
  m.relation_oids.resize(count);
  for (uint32_t& oid : m.relation_oids) r.u32(oid, "relation oid");
  return m;
}

DecodingMessage read_decoding_message(Reader& r, bool in_stream_block) {
  DecodingMessage m;
  read_stream_xid(r, in_stream_block, m.stream_xid);
  uint8_t flags = 0;
  if (r.u8(flags, "flags") && (flags & ~1u) != 0) r.fail("unknown flags " + std::to_string(flags));
  m.transactional = (flags & 1u) != 0;
  r.u64(m.lsn, "message LSN");
  r.cstr(m.prefix, "prefix");
  uint32_t length = 0;
  if (r.u32(length, "content length") && length > kMaxLength) r.fail("negative content length");
  r.bytes(length, m.content, "content");
  return m;
}

StreamStart read_stream_start(Reader& r) {
  StreamStart m;
  uint8_t first = 0;
  r.u32(m.xid, "xid");
  if (r.u8(first, "first segment flag") && first > 1) {
    r.fail("first segment flag " + std::to_string(first) + " is neither 0 nor 1");
  }
  m.first_segment = first == 1;
  return m;
}

StreamCommit read_stream_commit(Reader& r) {
  StreamCommit m;
  r.u32(m.xid, "xid");
  read_commit_tail(r, m);
  return m;
}

StreamAbort read_stream_abort(Reader& r) {
  StreamAbort m;
  r.u32(m.xid, "xid");
  r.u32(m.subxid, "subtransaction xid");
  return m;
}

// Where each message may appear relative to a StreamStart .. StreamStop block; "" if allowed.
const char* placement_error(char type, bool in_stream_block) {
  switch (type) {
    case 'B':
    case 'C':
    case 'S':
    case 'c':
    case 'A': return in_stream_block ? "not allowed inside a stream block" : "";
    case 'E': return in_stream_block ? "" : "without a Stream Start";
    default: return "";
  }
}

}  // namespace

Result<Message> decode_message(std::string_view data, bool in_stream_block) {
  if (data.empty()) return malformed('\0', "empty message");
  const char type = data[0];
  Reader r(data.substr(1));
  if (const char* why = placement_error(type, in_stream_block); *why != '\0') {
    return malformed(type, why);
  }
  Message m;
  switch (type) {
    case 'B': m = read_begin(r); break;
    case 'C': read_commit_tail(r, m.emplace<Commit>()); break;
    case 'O': m = read_origin(r); break;
    case 'R': m = read_relation(r, in_stream_block); break;
    case 'Y': m = read_type(r, in_stream_block); break;
    case 'I': m = read_insert(r, in_stream_block); break;
    case 'U': m = read_update(r, in_stream_block); break;
    case 'D': m = read_delete(r, in_stream_block); break;
    case 'T': m = read_truncate(r, in_stream_block); break;
    case 'M': m = read_decoding_message(r, in_stream_block); break;
    case 'S': m = read_stream_start(r); break;
    case 'E': m = StreamStop{}; break;
    case 'c': m = read_stream_commit(r); break;
    case 'A': m = read_stream_abort(r); break;
    case 'b':
    case 'P':
    case 'K':
    case 'r':
    case 'p':
      return malformed(type, "two-phase commit message " + describe_byte(static_cast<uint8_t>(type)) +
                                 " is not supported (do not enable two_phase)");
    default: return malformed(type, "unknown message type " + describe_byte(static_cast<uint8_t>(type)));
  }
  if (!r.ok()) return malformed(type, r.why());
  if (r.remaining() != 0) return malformed(type, "unexpected bytes after the last field");
  return m;
}

Result<Message> Decoder::decode(std::string_view data) {
  Result<Message> m = decode_message(data, in_stream_block_);
  if (m.is_ok()) {
    if (std::holds_alternative<StreamStart>(*m)) in_stream_block_ = true;
    if (std::holds_alternative<StreamStop>(*m)) in_stream_block_ = false;
  }
  return m;
}

}  // namespace sw::wire::pgoutput
