// Fuzz target: the mover's replication stream path, from CopyData payload to apply SQL.
//
// Input: a sequence of records (2-byte big-endian length + bytes, see RecordSplitter). Each
// record is one CopyData payload of START_REPLICATION: decode_replication_message; an XLogData's
// data goes through one pgoutput::Decoder (which tracks StreamStart/StreamStop across records);
// Relations go into a RelationCache; every message is then given to sqltext::change_statements
// for two configured tables ("orders" keyed by a bigint with a version column, "users" keyed by
// text), moving a fixed set of buckets. That is the whole pure path the catch-up applier runs.
//
// Each record is copied into a block of exactly its size first, so a read one byte past a
// message is an AddressSanitizer report rather than a silent read of the next record.
// Invariants: a failed decode leaves the stream-block state unchanged; a successful one changes
// it only for StreamStart/StreamStop; a Relation can be found right after it is put; a decoded
// tuple never has more columns than its message has bytes; every apply statement is one
// statement that parses (libpg_query) and uses exactly its parameters, whatever names the
// stream carries.
#include <cstdio>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config/config.h"
#include "fuzz_check.h"
#include "parser/analyze.h"
#include "router/bucket_set.h"
#include "sqltext/apply_sql.h"
#include "wire/pgoutput.h"

namespace {

using namespace sw::wire::pgoutput;
using sw::Result;
using sw::fuzz::ExactCopy;
using sw::fuzz::RecordSplitter;

// A tuple of N columns takes at least N kind bytes in its message.
size_t tuple_columns(const Message& m) {
  if (auto* insert = std::get_if<Insert>(&m)) return insert->new_tuple.size();
  if (auto* update = std::get_if<Update>(&m)) {
    return update->old_tuple.size() + update->new_tuple.size();
  }
  if (auto* del = std::get_if<Delete>(&m)) return del->old_tuple.size();
  return 0;
}

struct Applier {
  std::vector<sw::config::ShardedTable> tables{
      {"orders", "tenant_id", "bigint", "row_version"},
      {"users", "name", "text", ""},
  };
  sw::router::BucketSet buckets{16, {0, 3, 5, 9, 15}};
  Decoder decoder;
  RelationCache relations;

  void on_pgoutput(std::string_view data) {
    const bool was_in_block = decoder.in_stream_block();
    Result<Message> message = decoder.decode(data);
    if (!message) {
      FUZZ_CHECK(decoder.in_stream_block() == was_in_block);
      FUZZ_CHECK(message.status().sqlstate == "08P01");
      return;
    }
    const bool toggles =
        std::holds_alternative<StreamStart>(*message) || std::holds_alternative<StreamStop>(*message);
    FUZZ_CHECK(toggles || decoder.in_stream_block() == was_in_block);
    FUZZ_CHECK(tuple_columns(*message) <= data.size());

    // The decoder without its state must agree with it.
    Result<Message> stateless = decode_message(data, was_in_block);
    FUZZ_CHECK(stateless.is_ok() && stateless->index() == message->index());

    if (auto* relation = std::get_if<Relation>(&*message)) {
      const uint32_t oid = relation->oid;
      const size_t columns = relation->columns.size();
      relations.put(*relation);
      auto found = relations.find(oid);
      FUZZ_CHECK(found.is_ok() && (*found)->columns.size() == columns);
    }
    if (!sw::sqltext::is_row_change(*message)) return;
    auto statements = sw::sqltext::change_statements(*message, relations, tables, buckets);
    if (!statements) return;
    for (const auto& statement : *statements) check_apply_sql(statement);
  }

  // Schema, table and column names come from the source shard's stream; quoting must keep any
  // of them from changing the statement. So every statement parses, is exactly one statement,
  // and uses exactly the parameters it carries ($1..$n, values never spliced into the text).
  static void check_apply_sql(const sw::sqltext::ApplyStatement& statement) {
    FUZZ_CHECK(!statement.sql.empty());
    auto facts = sw::parser::analyze_uncached(statement.sql);
    if (!facts) std::fprintf(stderr, "unparsable apply SQL: %s\n", statement.sql.c_str());
    FUZZ_CHECK(facts.is_ok());
    FUZZ_CHECK((*facts)->statements.size() == 1);
    FUZZ_CHECK((*facts)->statements[0].max_param == static_cast<int>(statement.params.size()));
  }

  void on_copy_data(std::string_view payload) {
    Result<ReplicationMessage> message = decode_replication_message(payload);
    if (!message) return;
    if (auto* xlog = std::get_if<XLogData>(&*message)) {
      FUZZ_CHECK(xlog->data.size() < payload.size());
      FUZZ_CHECK(xlog->data.data() + xlog->data.size() == payload.data() + payload.size());
      ExactCopy data(xlog->data);
      on_pgoutput(data.view());
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Applier applier;
  RecordSplitter records(std::string_view(reinterpret_cast<const char*>(data), size));
  std::string_view record;
  while (records.next(record)) {
    ExactCopy payload(record);
    applier.on_copy_data(payload.view());
  }
  return 0;
}
