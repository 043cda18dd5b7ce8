// pgoutput decoder: hand-built samples of every message kind with each field checked, every
// truncation of every sample (decoded from exact-size heap copies, so ASan reports any read past
// the end), trailing bytes, bad kinds/flags/counts, stream-block placement, the replication
// envelope (XLogData, keepalive) and the standby status update's exact bytes, RelationCache.
#include "wire/pgoutput.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>

namespace sw::wire::pgoutput {
namespace {
using namespace std::string_literals;

// Big-endian builder for hand-made messages.
class Bytes {
 public:
  Bytes() = default;  // a message body without its type byte
  explicit Bytes(char type) { s_.push_back(type); }
  Bytes& u8(uint8_t v) { return raw(std::string(1, static_cast<char>(v))); }
  Bytes& u16(uint16_t v) { return be(v, 2); }
  Bytes& u32(uint32_t v) { return be(v, 4); }
  Bytes& u64(uint64_t v) { return be(v, 8); }
  Bytes& cstr(std::string_view v) { return raw(v).u8(0); }
  Bytes& raw(std::string_view v) {
    s_.append(v);
    return *this;
  }
  Bytes& text(std::string_view v) { return u8('t').u32(static_cast<uint32_t>(v.size())).raw(v); }
  Bytes& binary(std::string_view v) { return u8('b').u32(static_cast<uint32_t>(v.size())).raw(v); }
  const std::string& str() const { return s_; }

 private:
  Bytes& be(uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) s_.push_back(static_cast<char>(v >> (8 * i)));
    return *this;
  }
  std::string s_;
};

// Heap buffer of exactly the message's size.
class Exact {
 public:
  explicit Exact(std::string_view s) : data_(new char[s.size()]), size_(s.size()) {
    if (size_ != 0) s.copy(data_.get(), size_);
  }
  std::string_view view() const { return {data_.get(), size_}; }

 private:
  std::unique_ptr<char[]> data_;
  size_t size_;
};

void check_error(const Status& status, const std::string& fragment = "") {
  CHECK(status.sqlstate == "08P01");
  CHECK(status.fault == Fault::Server);
  CHECK_MESSAGE(status.message.find(fragment) != std::string::npos, status.message);
}

void check_rejected(const std::string& data, const std::string& fragment = "", bool in_stream_block = false) {
  const Exact exact(data);
  const Result<Message> r = decode_message(exact.view(), in_stream_block);
  REQUIRE_FALSE(r.is_ok());
  check_error(r.status(), fragment);
}

// Decodes `data` as T; then every strict prefix and `data` + one byte must be errors.
template <typename T>
T decode_sample(const std::string& data, bool in_stream_block = false) {
  for (size_t k = 0; k < data.size(); ++k) {
    CAPTURE(k);
    check_rejected(data.substr(0, k), "", in_stream_block);
  }
  check_rejected(data + '\0', "unexpected bytes after the last field", in_stream_block);
  const Exact exact(data);
  Result<Message> r = decode_message(exact.view(), in_stream_block);
  REQUIRE_MESSAGE(r.is_ok(), r.status().message);
  REQUIRE(std::holds_alternative<T>(*r));
  return std::get<T>(*r);
}

void check_text(const ColumnValue& v, const std::string& text) {
  CHECK(v.kind == ColumnKind::Text);
  REQUIRE(v.value.has_value());
  CHECK(*v.value == text);
}
void check_absent(const ColumnValue& v, ColumnKind kind) {
  CHECK(v.kind == kind);
  CHECK_FALSE(v.value.has_value());
}

constexpr uint64_t kLsn = 0x0000000116B3A0F8ull;
constexpr uint64_t kEndLsn = 0x0000000116B3A128ull;
constexpr int64_t kTime = 786'000'123'456'789;  // 2024-11-28, PostgreSQL epoch
constexpr uint32_t kOid = 16385;
constexpr uint32_t kXid = 900;   // of a streamed transaction
constexpr bool kInBlock = true;  // decode between Stream Start and Stream Stop

// Commit / Stream Commit after the xid: flags, commit LSN, end LSN, timestamp.
std::string commit_fields(uint8_t flags = 0) {
  return Bytes().u8(flags).u64(kLsn).u64(kEndLsn).u64(kTime).str();
}

// A change message inside a stream block starts with the streamed xid.
Bytes streamed(char type) { return Bytes(type).u32(kXid); }

std::string relation_sample() {
  return Bytes('R')
      .u32(kOid)
      .cstr("public")
      .cstr("orders")
      .u8('d')
      .u16(3)
      .u8(1)
      .cstr("id")
      .u32(20)
      .u32(0xffffffff)
      .u8(0)
      .cstr("note")
      .u32(25)
      .u32(0xffffffff)
      .u8(0)
      .cstr("amount")
      .u32(1700)
      .u32((10 << 16 | 2) + 4)
      .str();
}

}  // namespace

TEST_CASE("pgoutput: Begin, Commit, Origin") {
  const Begin begin = decode_sample<Begin>(Bytes('B').u64(kLsn).u64(kTime).u32(742).str());
  CHECK(begin.final_lsn == kLsn);
  CHECK(begin.commit_time == kTime);
  CHECK(begin.xid == 742);

  const Commit commit = decode_sample<Commit>(Bytes('C').raw(commit_fields()).str());
  CHECK(commit.commit_lsn == kLsn);
  CHECK(commit.end_lsn == kEndLsn);
  CHECK(commit.commit_time == kTime);
  check_rejected(Bytes('C').raw(commit_fields(1)).str(), "unknown flags 1");

  const Origin origin = decode_sample<Origin>(Bytes('O').u64(kLsn).cstr("node_a").str());
  CHECK(origin.commit_lsn == kLsn);
  CHECK(origin.name == "node_a");

  // A negative timestamp (before 2000) survives the unsigned wire field.
  CHECK(decode_sample<Begin>(Bytes('B').u64(1).u64(static_cast<uint64_t>(-5)).u32(1).str()).commit_time ==
        -5);
}

TEST_CASE("pgoutput: Relation and Type") {
  const Relation rel = decode_sample<Relation>(relation_sample());
  CHECK_FALSE(rel.stream_xid.has_value());
  CHECK(rel.oid == kOid);
  CHECK(rel.namespace_name == "public");
  CHECK(rel.name == "orders");
  CHECK(rel.replica_identity == 'd');
  REQUIRE(rel.columns.size() == 3);
  CHECK(rel.columns[0].key);
  CHECK(rel.columns[0].name == "id");
  CHECK(rel.columns[0].type_oid == 20);
  CHECK(rel.columns[0].type_modifier == -1);
  CHECK_FALSE(rel.columns[1].key);
  CHECK(rel.columns[1].name == "note");
  CHECK(rel.columns[1].type_oid == 25);
  CHECK(rel.columns[2].name == "amount");
  CHECK(rel.columns[2].type_oid == 1700);
  CHECK(rel.columns[2].type_modifier == (10 << 16 | 2) + 4);
  CHECK(rel.column_index("note") == 1);
  CHECK_FALSE(rel.column_index("missing").has_value());

  // "" is how pgoutput sends pg_catalog; zero columns is a valid (if odd) table.
  const Relation catalog_rel =
      decode_sample<Relation>(Bytes('R').u32(1259).cstr("").cstr("t").u8('f').u16(0).str());
  CHECK(catalog_rel.namespace_name == "pg_catalog");
  CHECK(catalog_rel.replica_identity == 'f');
  CHECK(catalog_rel.columns.empty());

  check_rejected(
      Bytes('R').u32(kOid).cstr("public").cstr("t").u8('d').u16(1).u8(2).cstr("id").u32(20).u32(0).str(),
      "column 1 has unknown flags 2");
  check_rejected(Bytes('R').u32(kOid).cstr("public").cstr("t").u8('d').u16(0xffff).u8(1).str(),
                 "declares 65535 columns");

  const Type type = decode_sample<Type>(Bytes('Y').u32(90001).cstr("public").cstr("mood").str());
  CHECK(type.oid == 90001);
  CHECK(type.namespace_name == "public");
  CHECK(type.name == "mood");
  CHECK(decode_sample<Type>(Bytes('Y').u32(23).cstr("").cstr("int4").str()).namespace_name == "pg_catalog");
}

TEST_CASE("pgoutput: Insert with text, binary and null columns") {
  const Insert ins = decode_sample<Insert>(
      Bytes('I').u32(kOid).u8('N').u16(4).text("1").u8('n').text("").binary("\x00\x01"s).str());
  CHECK_FALSE(ins.stream_xid.has_value());
  CHECK(ins.relation_oid == kOid);
  REQUIRE(ins.new_tuple.size() == 4);
  check_text(ins.new_tuple[0], "1");
  check_absent(ins.new_tuple[1], ColumnKind::Null);
  check_text(ins.new_tuple[2], "");  // empty text is not null
  CHECK(ins.new_tuple[3].kind == ColumnKind::Binary);
  CHECK(ins.new_tuple[3].value == "\x00\x01"s);

  CHECK(decode_sample<Insert>(Bytes('I').u32(kOid).u8('N').u16(0).str()).new_tuple.empty());
  check_rejected(Bytes('I').u32(kOid).u8('K').u16(1).text("1").str(), "expected new tuple 'N'");
  check_rejected(Bytes('I').u32(kOid).u8('N').u16(1).u8('x').str(),
                 "new tuple column 1 has unknown kind 'x'");
  check_rejected(Bytes('I').u32(kOid).u8('N').u16(2).u8('n').u8(0x01).str(),
                 "new tuple column 2 has unknown kind byte 1");
  check_rejected(Bytes('I').u32(kOid).u8('N').u16(1).u8('t').u32(0xffffffff).str(),
                 "new tuple column 1 has negative length");
  check_rejected(Bytes('I').u32(kOid).u8('N').u16(1).u8('t').u32(0x7fffffff).raw("abc").str(),
                 "new tuple column 1 length 2147483647 runs past the end");
  check_rejected(Bytes('I').u32(kOid).u8('N').u16(0xffff).u8('n').str(),
                 "new tuple declares 65535 columns but 1 bytes follow");
}

TEST_CASE("pgoutput: Update without old values, with old key, with old tuple") {
  const Update plain =
      decode_sample<Update>(Bytes('U').u32(kOid).u8('N').u16(3).text("1").u8('u').text("9.50").str());
  CHECK(plain.relation_oid == kOid);
  CHECK(plain.old_kind == OldTuple::None);
  CHECK(plain.old_tuple.empty());
  REQUIRE(plain.new_tuple.size() == 3);
  check_text(plain.new_tuple[0], "1");
  check_absent(plain.new_tuple[1], ColumnKind::UnchangedToast);
  check_text(plain.new_tuple[2], "9.50");

  const Update keyed = decode_sample<Update>(Bytes('U')
                                                 .u32(kOid)
                                                 .u8('K')
                                                 .u16(3)
                                                 .text("1")
                                                 .u8('n')
                                                 .u8('n')
                                                 .u8('N')
                                                 .u16(3)
                                                 .text("2")
                                                 .u8('u')
                                                 .u8('n')
                                                 .str());
  CHECK(keyed.old_kind == OldTuple::Key);
  REQUIRE(keyed.old_tuple.size() == 3);
  check_text(keyed.old_tuple[0], "1");
  check_absent(keyed.old_tuple[1], ColumnKind::Null);
  check_absent(keyed.old_tuple[2], ColumnKind::Null);
  REQUIRE(keyed.new_tuple.size() == 3);
  check_text(keyed.new_tuple[0], "2");
  check_absent(keyed.new_tuple[1], ColumnKind::UnchangedToast);
  check_absent(keyed.new_tuple[2], ColumnKind::Null);

  const Update full = decode_sample<Update>(
      Bytes('U').u32(kOid).u8('O').u16(2).text("1").text("old").u8('N').u16(2).text("1").text("new").str());
  CHECK(full.old_kind == OldTuple::Full);
  REQUIRE(full.old_tuple.size() == 2);
  check_text(full.old_tuple[1], "old");
  REQUIRE(full.new_tuple.size() == 2);
  check_text(full.new_tuple[1], "new");

  check_rejected(Bytes('U').u32(kOid).u8('X').u16(0).str(), "expected new tuple 'N', got 'X'");
  check_rejected(Bytes('U').u32(kOid).u8('K').u16(0).u8('K').u16(0).str(), "expected new tuple 'N', got 'K'");
}

TEST_CASE("pgoutput: Delete with old key and with old tuple") {
  const Delete keyed =
      decode_sample<Delete>(Bytes('D').u32(kOid).u8('K').u16(3).text("7").u8('n').u8('n').str());
  CHECK(keyed.relation_oid == kOid);
  CHECK(keyed.old_kind == OldTuple::Key);
  REQUIRE(keyed.old_tuple.size() == 3);
  check_text(keyed.old_tuple[0], "7");
  check_absent(keyed.old_tuple[2], ColumnKind::Null);

  const Delete full = decode_sample<Delete>(Bytes('D').u32(kOid).u8('O').u16(2).text("7").text("x").str());
  CHECK(full.old_kind == OldTuple::Full);
  REQUIRE(full.old_tuple.size() == 2);
  check_text(full.old_tuple[1], "x");

  check_rejected(Bytes('D').u32(kOid).u8('N').u16(0).str(), "expected old key 'K' or old tuple 'O'");
}

TEST_CASE("pgoutput: Truncate with options") {
  const Truncate both = decode_sample<Truncate>(Bytes('T').u32(2).u8(3).u32(kOid).u32(kOid + 7).str());
  CHECK(both.cascade);
  CHECK(both.restart_identity);
  CHECK(both.relation_oids == std::vector<uint32_t>{kOid, kOid + 7});

  const Truncate restart = decode_sample<Truncate>(Bytes('T').u32(1).u8(2).u32(kOid).str());
  CHECK_FALSE(restart.cascade);
  CHECK(restart.restart_identity);
  const Truncate cascade = decode_sample<Truncate>(Bytes('T').u32(1).u8(1).u32(kOid).str());
  CHECK(cascade.cascade);
  CHECK_FALSE(cascade.restart_identity);
  const Truncate none = decode_sample<Truncate>(Bytes('T').u32(1).u8(0).u32(kOid).str());
  CHECK_FALSE(none.cascade);
  CHECK_FALSE(none.restart_identity);

  check_rejected(Bytes('T').u32(1).u8(4).u32(kOid).str(), "unknown options 4");
  // A count far beyond the bytes present is refused before anything is allocated for it.
  check_rejected(Bytes('T').u32(0xffffffff).u8(0).u32(kOid).str(),
                 "declares 4294967295 relations but 4 bytes follow");
}

TEST_CASE("pgoutput: logical decoding Message") {
  const DecodingMessage m = decode_sample<DecodingMessage>(
      Bytes('M').u8(1).u64(kLsn).cstr("shardwire").u32(4).raw("a\0b\xff"s).str());
  CHECK_FALSE(m.stream_xid.has_value());
  CHECK(m.transactional);
  CHECK(m.lsn == kLsn);
  CHECK(m.prefix == "shardwire");
  CHECK(m.content == "a\0b\xff"s);
  CHECK_FALSE(
      decode_sample<DecodingMessage>(Bytes('M').u8(0).u64(kLsn).cstr("p").u32(0).str()).transactional);
  check_rejected(Bytes('M').u8(2).u64(kLsn).cstr("p").u32(0).str(), "unknown flags 2");
  check_rejected(Bytes('M').u8(0).u64(kLsn).cstr("p").u32(0x80000000).str(), "negative content length");
  check_rejected(Bytes('M').u8(0).u64(kLsn).cstr("p").u32(5).raw("abcd").str(), "content runs past the end");
}

TEST_CASE("pgoutput: stream messages and the xid inside a stream block") {
  const StreamStart start = decode_sample<StreamStart>(Bytes('S').u32(kXid).u8(1).str());
  CHECK(start.xid == kXid);
  CHECK(start.first_segment);
  CHECK_FALSE(decode_sample<StreamStart>(Bytes('S').u32(kXid).u8(0).str()).first_segment);
  check_rejected(Bytes('S').u32(kXid).u8(2).str(), "neither 0 nor 1");

  decode_sample<StreamStop>(Bytes('E').str(), kInBlock);

  const StreamCommit commit = decode_sample<StreamCommit>(Bytes('c').u32(kXid).raw(commit_fields()).str());
  CHECK(commit.xid == kXid);
  CHECK(commit.commit_lsn == kLsn);
  CHECK(commit.end_lsn == kEndLsn);
  CHECK(commit.commit_time == kTime);
  check_rejected(Bytes('c').u32(kXid).raw(commit_fields(1)).str(), "unknown flags");

  const StreamAbort abort = decode_sample<StreamAbort>(Bytes('A').u32(kXid).u32(901).str());
  CHECK(abort.xid == kXid);
  CHECK(abort.subxid == 901);

  // Inside the block every change message starts with the streamed xid.
  const std::string relation = "R" + Bytes().u32(kXid).str() + relation_sample().substr(1);
  CHECK(decode_sample<Relation>(relation, kInBlock).stream_xid == kXid);
  const std::string type = streamed('Y').u32(1).cstr("s").cstr("t").str();
  CHECK(decode_sample<Type>(type, kInBlock).stream_xid == kXid);
  const std::string insert = streamed('I').u32(kOid).u8('N').u16(1).text("1").str();
  const Insert ins = decode_sample<Insert>(insert, kInBlock);
  CHECK(ins.stream_xid == kXid);
  CHECK(ins.relation_oid == kOid);
  const std::string update = streamed('U').u32(kOid).u8('N').u16(0).str();
  CHECK(decode_sample<Update>(update, kInBlock).stream_xid == kXid);
  const std::string del = streamed('D').u32(kOid).u8('K').u16(0).str();
  CHECK(decode_sample<Delete>(del, kInBlock).stream_xid == kXid);
  const std::string truncate = streamed('T').u32(1).u8(0).u32(kOid).str();
  const Truncate trunc = decode_sample<Truncate>(truncate, kInBlock);
  CHECK(trunc.stream_xid == kXid);
  CHECK(trunc.relation_oids == std::vector<uint32_t>{kOid});
  const std::string message = streamed('M').u8(1).u64(kLsn).cstr("p").u32(0).str();
  CHECK(decode_sample<DecodingMessage>(message, kInBlock).stream_xid == kXid);
  CHECK(decode_sample<Origin>(Bytes('O').u64(0).cstr("node_a").str(), kInBlock).name == "node_a");

  // Placement: transaction boundaries belong outside a block, Stream Stop inside one.
  const char* const inside = "not allowed inside a stream block";
  check_rejected(Bytes('B').u64(kLsn).u64(kTime).u32(1).str(), inside, kInBlock);
  check_rejected(Bytes('C').raw(commit_fields()).str(), inside, kInBlock);
  check_rejected(Bytes('S').u32(901).u8(1).str(), inside, kInBlock);
  check_rejected(Bytes('c').u32(kXid).raw(commit_fields()).str(), inside, kInBlock);
  check_rejected(Bytes('A').u32(kXid).u32(kXid).str(), inside, kInBlock);
  check_rejected(Bytes('E').str(), "Stream Stop message: without a Stream Start");
}

TEST_CASE("pgoutput: Decoder tracks the stream block") {
  Decoder decoder;
  const std::string insert_body = Bytes().u32(kOid).u8('N').u16(1).text("1").str();
  CHECK(decoder.decode("I" + insert_body).is_ok());
  REQUIRE(decoder.decode(Bytes('S').u32(kXid).u8(1).str()).is_ok());
  CHECK(decoder.in_stream_block());
  // The xid-less form is now malformed: the oid is read as the xid and the tag is wrong.
  CHECK_FALSE(decoder.decode("I" + insert_body).is_ok());
  CHECK(decoder.in_stream_block());  // a failed decode changes nothing
  Result<Message> in_block = decoder.decode(streamed('I').raw(insert_body).str());
  REQUIRE(in_block.is_ok());
  CHECK(std::get<Insert>(*in_block).stream_xid == kXid);
  CHECK(decoder.decode("E").is_ok());
  CHECK_FALSE(decoder.in_stream_block());
  CHECK_FALSE(decoder.decode("E").is_ok());
  CHECK(decoder.decode(Bytes('A').u32(900).u32(900).str()).is_ok());
}

TEST_CASE("pgoutput: unknown and unsupported message types") {
  check_rejected("", "empty message");
  check_rejected("Z", "invalid pgoutput message: unknown message type 'Z'");
  check_rejected("\x01"s, "unknown message type byte 1");
  for (char type : {'b', 'P', 'K', 'r', 'p'}) {
    CAPTURE(type);
    check_rejected(std::string(1, type) + std::string(40, '\0'), "two-phase commit message");
  }
}

TEST_CASE("pgoutput: XLogData and primary keepalive") {
  const std::string insert = Bytes('I').u32(kOid).u8('N').u16(1).text("42").str();
  const std::string xlog = Bytes('w').u64(kLsn).u64(kEndLsn).u64(kTime).raw(insert).str();
  {
    const Exact exact(xlog);
    Result<ReplicationMessage> r = decode_replication_message(exact.view());
    REQUIRE(r.is_ok());
    REQUIRE(std::holds_alternative<XLogData>(*r));
    const XLogData& x = std::get<XLogData>(*r);
    CHECK(x.wal_start == kLsn);
    CHECK(x.wal_end == kEndLsn);
    CHECK(x.send_time == kTime);
    CHECK(x.data == insert);
    Result<Message> m = decode_message(x.data);
    REQUIRE(m.is_ok());
    check_text(std::get<Insert>(*m).new_tuple.at(0), "42");
  }
  // The header alone is a valid XLogData with no data (the pgoutput decoder then refuses it).
  for (size_t k = 0; k < 25; ++k) {
    CAPTURE(k);
    const Exact exact(xlog.substr(0, k));
    const Result<ReplicationMessage> r = decode_replication_message(exact.view());
    REQUIRE_FALSE(r.is_ok());
    check_error(r.status());
  }

  const std::string keepalive = Bytes('k').u64(kEndLsn).u64(kTime).u8(1).str();
  {
    const Exact exact(keepalive);
    Result<ReplicationMessage> r = decode_replication_message(exact.view());
    REQUIRE(r.is_ok());
    REQUIRE(std::holds_alternative<PrimaryKeepalive>(*r));
    const PrimaryKeepalive& k = std::get<PrimaryKeepalive>(*r);
    CHECK(k.wal_end == kEndLsn);
    CHECK(k.send_time == kTime);
    CHECK(k.reply_requested);
  }
  Result<ReplicationMessage> quiet =
      decode_replication_message(Bytes('k').u64(kEndLsn).u64(kTime).u8(0).str());
  REQUIRE(quiet.is_ok());
  CHECK_FALSE(std::get<PrimaryKeepalive>(*quiet).reply_requested);
  for (size_t k = 0; k <= keepalive.size(); ++k) {
    const std::string bad = k == keepalive.size() ? keepalive + '\0' : keepalive.substr(0, k);
    CAPTURE(k);
    const Exact exact(bad);
    const Result<ReplicationMessage> r = decode_replication_message(exact.view());
    REQUIRE_FALSE(r.is_ok());
    check_error(r.status());
  }
  const auto bad_flag = decode_replication_message(Bytes('k').u64(1).u64(2).u8(2).str());
  REQUIRE_FALSE(bad_flag.is_ok());
  check_error(bad_flag.status(), "reply flag 2");
  const auto unknown = decode_replication_message("r");
  REQUIRE_FALSE(unknown.is_ok());
  check_error(unknown.status(), "unknown message type 'r'");
}

TEST_CASE("pgoutput: standby status update bytes") {
  std::string out = "x";  // appends
  const StandbyStatusUpdate update{0x0102030405060708ull, 0x1112131415161718ull, 0x2122232425262728ull,
                                   0x0a0b, true};
  encode_standby_status_update(out, update);
  CHECK(out ==
        "xr"
        "\x01\x02\x03\x04\x05\x06\x07\x08"
        "\x11\x12\x13\x14\x15\x16\x17\x18"
        "\x21\x22\x23\x24\x25\x26\x27\x28"
        "\x00\x00\x00\x00\x00\x00\x0a\x0b"
        "\x01"s);
  std::string quiet;
  encode_standby_status_update(quiet, {1, 2, 3, -1, false});
  CHECK(quiet.size() == 34);
  CHECK(quiet.substr(25) == "\xff\xff\xff\xff\xff\xff\xff\xff\x00"s);

  CHECK(pg_timestamp_from_unix_micros(kPgEpochUnixMicros) == 0);
  CHECK(unix_micros_from_pg_timestamp(0) == 946'684'800'000'000);
  CHECK(unix_micros_from_pg_timestamp(pg_timestamp_from_unix_micros(1'700'000'000'000'000)) ==
        1'700'000'000'000'000);
}

TEST_CASE("pgoutput: RelationCache") {
  RelationCache cache;
  const Result<const Relation*> unknown = cache.find(kOid);
  REQUIRE_FALSE(unknown.is_ok());
  check_error(unknown.status(), "relation oid 16385");

  Result<Message> rel = decode_message(relation_sample());
  REQUIRE(rel.is_ok());
  cache.put(std::get<Relation>(*rel));
  CHECK(cache.size() == 1);
  Result<const Relation*> found = cache.find(kOid);
  REQUIRE(found.is_ok());
  CHECK((*found)->name == "orders");
  CHECK((*found)->columns.size() == 3);

  const TupleData three(3);
  const TupleData two(2);
  CHECK(cache.find_for_tuple(kOid, three).is_ok());
  const Result<const Relation*> mismatch = cache.find_for_tuple(kOid, two);
  REQUIRE_FALSE(mismatch.is_ok());
  check_error(mismatch.status(), "public.orders has 2 columns, its Relation message 3");
  CHECK_FALSE(cache.find_for_tuple(kOid + 1, three).is_ok());

  // A later Relation for the same oid (schema change) replaces the description.
  Relation altered = std::get<Relation>(*rel);
  altered.columns.pop_back();
  cache.put(altered);
  CHECK(cache.size() == 1);
  CHECK(cache.find_for_tuple(kOid, two).is_ok());
  CHECK((*found)->columns.size() == 2);  // same entry, new contents

  cache.clear();
  CHECK_FALSE(cache.find(kOid).is_ok());
}

}  // namespace sw::wire::pgoutput
