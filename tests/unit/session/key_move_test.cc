// KeyMovePlan: what the client of an UPDATE that moves rows gets from the shards' answers (its own
// UPDATE's description, its RETURNING items in its result formats); key_move_request: the batch
// every shard runs.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "session/key_move.h"
#include "session/key_move_request.h"
#include "wire/messages.h"
#include "wire/row_description.h"

using sw::session::KeyMoveClient;
using sw::session::KeyMovePlan;

namespace {

constexpr uint32_t kInt8 = 20, kText = 25, kJsonb = 3802;

std::shared_ptr<sw::router::KeyMove> move_of(bool returning) {
  auto move = std::make_shared<sw::router::KeyMove>();
  move->table_sql = "\"orders\"";
  move->owner = {0, 1};  // bucket 0 on shard 0, bucket 1 on shard 1
  move->client_returning = returning;
  return move;
}

sw::wire::RowField field(std::string_view name, uint32_t type, uint32_t table = 0, int16_t column = 0) {
  sw::wire::RowField f;
  f.name = name;
  f.type_oid = type;
  f.table_oid = table;
  f.column = column;
  f.type_size = type == kInt8 ? 8 : -1;
  return f;
}

std::string body_of(const std::string& message) { return message.substr(5); }

// The client's UPDATE described: RETURNING tenant_id (orders.tenant_id), and `second` as well.
std::string client_description(uint32_t second) {
  std::string out;
  sw::wire::encode_row_description(out, {field("tenant_id", kInt8, 16384, 2), field("x", second)});
  return body_of(out);
}

// The move's statement described: bucket, the table's two columns, the marker, the items.
std::string move_description(uint32_t second) {
  std::string out;
  sw::wire::encode_row_description(
      out, {field("bucket_of", 23), field("id", kInt8), field("tenant_id", kInt8),
            field(sw::router::kKeyMoveEnd, kText), field("tenant_id", kInt8), field("x", second)});
  return body_of(out);
}

std::string move_row(const char* bucket) {
  std::string out;
  sw::wire::encode_data_row(out, {std::string(bucket), std::string("7"), std::string("42"), std::nullopt,
                                  std::string("42"), std::string("hi")});
  return body_of(out);
}

}  // namespace

TEST_CASE("the client's RETURNING is its UPDATE's own description, in its result formats") {
  KeyMoveClient client;
  client.extended = true;
  client.describes = true;
  client.result_formats = {1, 0};  // tenant_id binary, x text
  KeyMovePlan plan(move_of(true), {0, 1}, client);
  std::string answer;
  REQUIRE(plan.on_row_description(0, "s0", client_description(kText), answer).is_ok());
  CHECK(answer.empty());  // owed after BindComplete: with the move's description
  REQUIRE(plan.on_row_description(0, "s0", move_description(kText), answer).is_ok());
  REQUIRE(answer.size() > 5);
  CHECK(answer[0] == 'T');
  const std::string answer_body = body_of(answer);
  auto described = sw::wire::decode_row_description(answer_body);
  REQUIRE(described.is_ok());
  REQUIRE(described.value().size() == 2);
  CHECK(described.value()[0].table_oid == 16384);
  CHECK(described.value()[0].column == 2);
  CHECK(described.value()[0].format == 1);
  CHECK(described.value()[1].format == 0);
  std::string row;
  REQUIRE(plan.on_data_row(0, move_row("1"), row).is_ok());
  const std::string row_body = body_of(row);
  auto values = sw::wire::decode_data_row(row_body);
  REQUIRE(values.is_ok());
  REQUIRE(values.value().size() == 2);
  CHECK(*values.value()[0] == std::string("\0\0\0\0\0\0\0\x2a", 8));
  CHECK(*values.value()[1] == "hi");
  CHECK(plan.next_statement(1) ==
        "INSERT INTO \"orders\" (\"id\", \"tenant_id\") OVERRIDING SYSTEM VALUE VALUES (E'7', E'42')");
  CHECK(plan.next_statement(0).empty());
}

TEST_CASE("an extended client gets a description only when it described its portal, else NoData") {
  KeyMoveClient quiet;
  quiet.extended = true;
  KeyMovePlan plan(move_of(true), {0, 1}, quiet);
  std::string answer;
  REQUIRE(plan.on_row_description(0, "s0", client_description(kText), answer).is_ok());
  REQUIRE(plan.on_row_description(0, "s0", move_description(kText), answer).is_ok());
  CHECK(answer.empty());

  KeyMoveClient describes;
  describes.extended = true;
  describes.describes = true;
  KeyMovePlan no_returning(move_of(false), {0, 1}, describes);
  no_returning.on_no_data();
  std::string nothing;
  sw::wire::encode_row_description(
      nothing, {field("bucket_of", 23), field("id", kInt8), field(sw::router::kKeyMoveEnd, kText)});
  REQUIRE(no_returning.on_row_description(0, "s0", body_of(nothing), answer).is_ok());
  CHECK(answer == std::string("n\0\0\0\4", 5));
}

TEST_CASE("a binary RETURNING item without a conversion, or too many result formats, is refused") {
  KeyMoveClient binary;
  binary.extended = true;
  binary.result_formats = {1};
  KeyMovePlan plan(move_of(true), {0, 1}, binary);
  std::string answer;
  auto refused = plan.on_row_description(0, "s0", client_description(kJsonb), answer);
  CHECK(refused.sqlstate == "0A000");
  CHECK(refused.message.find("ask for it in text") != std::string::npos);

  binary.result_formats = {0, 0, 0};
  KeyMovePlan three(move_of(true), {0, 1}, binary);
  CHECK(three.on_row_description(0, "s0", client_description(kText), answer).sqlstate == "08P01");
}

TEST_CASE("shards that describe other columns fail the move with 42804, naming both shards") {
  KeyMovePlan items(move_of(true), {0, 1});
  std::string answer;
  REQUIRE(items.on_row_description(0, "s0", client_description(kText), answer).is_ok());
  auto differs = items.on_row_description(1, "s1", client_description(kInt8), answer);
  CHECK(differs.sqlstate == "42804");
  CHECK(differs.message.find("column 2 \"x\" is bigint on shard s1 and text on shard s0") !=
        std::string::npos);

  KeyMovePlan moved(move_of(true), {0, 1});
  REQUIRE(moved.on_row_description(0, "s0", client_description(kText), answer).is_ok());
  REQUIRE(moved.on_row_description(1, "s1", client_description(kText), answer).is_ok());
  REQUIRE(moved.on_row_description(0, "s0", move_description(kText), answer).is_ok());
  std::string wider;  // s1's table has a third column
  sw::wire::encode_row_description(
      wider, {field("bucket_of", 23), field("id", kInt8), field("tenant_id", kInt8), field("note", kText),
              field(sw::router::kKeyMoveEnd, kText), field("tenant_id", kInt8), field("x", kText)});
  auto more = moved.on_row_description(1, "s1", body_of(wider), answer);
  CHECK(more.sqlstate == "42804");
  CHECK(more.message.find("shard s1 returned 7 columns where shard s0 returned 6") != std::string::npos);
}

TEST_CASE("every shard describes the client's UPDATE, then runs the move's statement whole") {
  const std::string batch = sw::session::key_move_request("UPDATE t SET k = $1", "WITH ...", {20}, "");
  std::string types;
  for (size_t at = 0; at < batch.size();) {
    types.push_back(batch[at]);
    const auto length = static_cast<size_t>(
        static_cast<unsigned char>(batch[at + 1]) << 24 | static_cast<unsigned char>(batch[at + 2]) << 16 |
        static_cast<unsigned char>(batch[at + 3]) << 8 | static_cast<unsigned char>(batch[at + 4]));
    at += 1 + length;
  }
  CHECK(types == "PDPBDES");
  CHECK(batch.find("UPDATE t SET k = $1") < batch.find("WITH ..."));
}

// The message kinds of an answer, each CommandComplete with its tag.
std::string kinds_of(const std::string& answer) {
  std::string out;
  for (size_t at = 0; at + 5 <= answer.size();) {
    const uint32_t length = (static_cast<uint32_t>(static_cast<unsigned char>(answer[at + 1])) << 24) |
                            (static_cast<uint32_t>(static_cast<unsigned char>(answer[at + 2])) << 16) |
                            (static_cast<uint32_t>(static_cast<unsigned char>(answer[at + 3])) << 8) |
                            static_cast<unsigned char>(answer[at + 4]);
    out += answer[at];
    if (answer[at] == 'C') out += "(" + answer.substr(at + 5, length - 5) + ")";  // the tag, without its NUL
    at += 1 + length;
  }
  return out;
}

TEST_CASE("Execute row limits: each Execute its rows, PortalSuspended or its own count, as PostgreSQL") {
  struct Case {
    std::vector<uint32_t> limits;
    std::string answer;  // of 3 rows
    bool rest;           // every Execute suspended: the rows left stay for later Executes
  };
  const std::string c0 = "C(UPDATE 0)", c1 = "C(UPDATE 1)", c3 = "C(UPDATE 3)";
  const std::vector<Case> cases = {
      {{2}, "DDs", true},
      {{3}, "DDDs", true},
      {{5}, "DDD" + c3, false},
      {{2, 2}, "DDsD" + c1, false},
      {{1, 1, 1, 1}, "DsDsDs" + c0, false},
      {{2, 0}, "DDsD" + c1, false},
      {{0x80000000u}, "DDD" + c3, false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.answer);
    KeyMoveClient client;
    client.extended = true;
    client.row_limits = c.limits;
    KeyMovePlan plan(move_of(true), {0, 1}, client);
    std::string answer, part;
    REQUIRE(plan.on_row_description(0, "s0", client_description(kText), part).is_ok());
    REQUIRE(plan.on_row_description(0, "s0", move_description(kText), part).is_ok());
    for (int i = 0; i < 3; ++i) {
      part.clear();
      REQUIRE(plan.on_data_row(0, move_row("1"), part).is_ok());
      answer += part;
    }
    CHECK(plan.fetched_by_executes());
    CHECK(kinds_of(answer + plan.portal_end()) == c.answer);
    CHECK(plan.next_statement(1).find("VALUES (E'7', E'42'), (E'7', E'42'), (E'7', E'42')") !=
          std::string::npos);
    auto rest = plan.take_rest();
    CHECK((rest != nullptr) == c.rest);
    if (rest && c.limits == std::vector<uint32_t>{2}) {
      CHECK(kinds_of(rest->execute(2)) == "D" + c1);  // fewer rows left than asked
      CHECK(kinds_of(rest->execute(2)) == c0);
    }
  }
}
