// Message codecs: encode -> read_frame -> decode round trips for every pair, and malformed
// bodies for every decoder (every truncation, trailing bytes, bad counts), decoded from
// exact-size heap copies so ASan reports any read past the body.
#include "wire/messages.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "common/bytes.h"
#include "wire/frame_reader.h"

namespace sw::wire {
namespace {
using namespace std::string_literals;

// The single frame `out` holds; checks its type and that it spans all of `out`.
std::string_view only_frame(const std::string& out, char type, Sender sender) {
  const FrameResult r = read_frame(out, sender, Limits{});
  REQUIRE(r.status == FrameStatus::Complete);
  CHECK(r.frame.type == type);
  CHECK(r.frame.size == out.size());
  return r.frame.body;
}

// Heap buffer of exactly the body's size.
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

// `valid` decodes; each strict prefix and `valid` + one byte do not, with 08P01 and `fault`.
template <typename Decode>
void check_malformed(const std::string& valid, Decode decode, Fault fault, bool trailing_is_error = true) {
  REQUIRE(decode(Exact(valid).view()).is_ok());
  auto check_error = [&](const std::string& body) {
    Exact exact(body);
    const auto r = decode(exact.view());
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().sqlstate == "08P01");
    CHECK(r.status().fault == fault);
    CHECK_FALSE(r.status().message.empty());
  };
  for (size_t k = 0; k < valid.size(); ++k) {
    CAPTURE(k);
    check_error(valid.substr(0, k));
  }
  if (trailing_is_error) check_error(valid + "\x01");
}

std::string be32(uint32_t v) {
  std::string out;
  append_be32(out, v);
  return out;
}

std::string be16(uint16_t v) {
  std::string out;
  append_be16(out, v);
  return out;
}

// Bind rest: formats {1}, params {"42", NULL}, result formats {0, 1}.
const std::string kBindRest =
    be16(1) + be16(1) + be16(2) + be32(2) + "42" + be32(0xffffffff) + be16(2) + be16(0) + be16(1);

}  // namespace

TEST_CASE("messages: Parse round trip and malformed bodies") {
  std::string out;
  encode_parse(out, "s1", "SELECT $1::int8, $2", {20, 25});
  const Result<ParseMessage> m = decode_parse(only_frame(out, 'P', Sender::Client));
  REQUIRE(m.is_ok());
  CHECK(m.value().statement == "s1");
  CHECK(m.value().query == "SELECT $1::int8, $2");
  CHECK(m.value().param_types == std::vector<uint32_t>{20, 25});

  out.clear();
  encode_parse(out, "", "SELECT 1", {});
  const Result<ParseMessage> unnamed = decode_parse(only_frame(out, 'P', Sender::Client));
  REQUIRE(unnamed.is_ok());
  CHECK(unnamed.value().statement.empty());
  CHECK(unnamed.value().param_types.empty());
  check_malformed(std::string(only_frame(out, 'P', Sender::Client)), decode_parse, Fault::Client);

  const std::string with_types = "s\0q\0"s + be16(2) + be32(23) + be32(25);
  check_malformed(with_types, decode_parse, Fault::Client);
  CHECK_FALSE(decode_parse("s\0q\0"s + be16(3) + be32(23) + be32(25)).is_ok());  // count too big
  CHECK_FALSE(decode_parse("s\0q\0"s + be16(0xffff)).is_ok());

  std::string unchanged = "keep";
  encode_parse(unchanged, "s", "q", std::vector<uint32_t>(0x10000, 23));  // count not encodable
  CHECK(unchanged == "keep");
  encode_parse(unchanged, "s", "q", std::vector<uint32_t>(0xffff, 23));
  const std::string max_frame = unchanged.substr(4);
  const Result<ParseMessage> max = decode_parse(only_frame(max_frame, 'P', Sender::Client));
  REQUIRE(max.is_ok());
  CHECK(max.value().param_types.size() == 0xffff);
}

TEST_CASE("messages: Bind decode, rename round trip and malformed bodies") {
  const std::string body = "portal\0stmt\0"s + kBindRest;
  const Result<BindMessage> m = decode_bind(body);
  REQUIRE(m.is_ok());
  CHECK(m.value().portal == "portal");
  CHECK(m.value().statement == "stmt");
  CHECK(m.value().rest == kBindRest);

  std::string out;
  encode_bind_renamed(out, m.value(), "sw_7");
  const Result<BindMessage> renamed = decode_bind(only_frame(out, 'B', Sender::Client));
  REQUIRE(renamed.is_ok());
  CHECK(renamed.value().portal == "portal");
  CHECK(renamed.value().statement == "sw_7");
  CHECK(renamed.value().rest == kBindRest);
  // Appended after what `out` holds; a name with a NUL leaves it unchanged.
  const std::string one = out;
  encode_bind_renamed(out, m.value(), "");
  const std::string second = out.substr(one.size());
  const Result<BindMessage> unnamed = decode_bind(only_frame(second, 'B', Sender::Client));
  REQUIRE(unnamed.is_ok());
  CHECK(unnamed.value().statement.empty());
  CHECK(unnamed.value().rest == kBindRest);
  CHECK(out.substr(0, one.size()) == one);
  const std::string two = out;
  encode_bind_renamed(out, m.value(), "sw\0_7"s);
  CHECK(out == two);

  check_malformed(body, decode_bind, Fault::Client);
  const std::string minimal = "\0\0"s + be16(0) + be16(0) + be16(0);
  check_malformed(minimal, decode_bind, Fault::Client);
  // Two format codes for three parameters.
  CHECK_FALSE(
      decode_bind("\0\0"s + be16(2) + be16(0) + be16(0) + be16(3) + be32(0) + be32(0) + be32(0) + be16(0))
          .is_ok());
  // Negative length other than -1, and a length past the body.
  CHECK_FALSE(decode_bind("\0\0"s + be16(0) + be16(1) + be32(0xfffffffe) + be16(0)).is_ok());
  CHECK_FALSE(decode_bind("\0\0"s + be16(0) + be16(1) + be32(100) + "ab" + be16(0)).is_ok());
}

TEST_CASE("messages: Describe/Close target round trip and malformed bodies") {
  for (char type : {'D', 'C'}) {
    for (char kind : {'S', 'P'}) {
      std::string out;
      encode_target(out, type, kind, "name");
      const Result<TargetMessage> m = decode_target(only_frame(out, type, Sender::Client));
      REQUIRE(m.is_ok());
      CHECK(m.value().kind == kind);
      CHECK(m.value().name == "name");
    }
  }
  check_malformed("Sname\0"s, decode_target, Fault::Client);
  check_malformed("P\0"s, decode_target, Fault::Client);
  CHECK_FALSE(decode_target("X\0"s).is_ok());
}

TEST_CASE("messages: Execute round trip and malformed bodies") {
  for (uint32_t max_rows : {0u, 1u, 0x7fffffffu, 0xffffffffu}) {
    std::string out;
    encode_execute(out, "portal", max_rows);
    const Result<ExecuteMessage> m = decode_execute(only_frame(out, 'E', Sender::Client));
    REQUIRE(m.is_ok());
    CHECK(m.value().portal == "portal");
    CHECK(m.value().max_rows == max_rows);
  }
  std::string out;
  encode_execute(out, "", 0);
  CHECK(out == "E\0\0\0\x09\0\0\0\0\0"s);
  check_malformed("p\0"s + be32(5), decode_execute, Fault::Client);
  encode_execute(out, "a\0b"s, 0);  // a name with a NUL is not encodable
  CHECK(out.size() == 10);
}

TEST_CASE("messages: Execute of every row, Describe of a portal") {
  CHECK(executes_every_row("\0"s + be32(0)));
  CHECK(executes_every_row("p\0"s + be32(0)));
  CHECK_FALSE(executes_every_row("\0"s + be32(1)));
  CHECK_FALSE(executes_every_row("\0"s + be32(0) + "x"));
  CHECK_FALSE(executes_every_row(be32(0)));
  CHECK(describes_portal("P\0"s));
  CHECK(describes_portal("Pname\0"s));
  CHECK_FALSE(describes_portal("S\0"s));
  CHECK_FALSE(describes_portal("P"s));
  CHECK_FALSE(describes_portal("P\0x"s));
}

TEST_CASE("messages: Query round trip and malformed bodies") {
  std::string out;
  encode_query(out, "SELECT 'a;b'");
  const Result<std::string_view> q = decode_query(only_frame(out, 'Q', Sender::Client));
  REQUIRE(q.is_ok());
  CHECK(q.value() == "SELECT 'a;b'");
  check_malformed("SELECT 1\0"s, decode_query, Fault::Client);
  check_malformed("\0"s, decode_query, Fault::Client);
}

TEST_CASE("messages: SASLInitialResponse round trip and malformed bodies") {
  std::string out;
  encode_sasl_initial_response(out, "SCRAM-SHA-256", "n,,n=,r=abc");
  const std::string body(only_frame(out, 'p', Sender::Client));
  const Result<SaslInitialResponse> m = decode_sasl_initial_response(body);
  REQUIRE(m.is_ok());
  CHECK(m.value().mechanism == "SCRAM-SHA-256");
  CHECK(m.value().data == "n,,n=,r=abc");
  check_malformed(body, decode_sasl_initial_response, Fault::Client);

  out.clear();
  encode_sasl_initial_response(out, "SCRAM-SHA-256", "");
  const Result<SaslInitialResponse> empty =
      decode_sasl_initial_response(only_frame(out, 'p', Sender::Client));
  REQUIRE(empty.is_ok());
  CHECK(empty.value().data.empty());

  const std::string absent = "M\0"s + be32(0xffffffff);
  const Result<SaslInitialResponse> a = decode_sasl_initial_response(absent);
  REQUIRE(a.is_ok());
  CHECK(a.value().data.empty());
  check_malformed(absent, decode_sasl_initial_response, Fault::Client);
  CHECK_FALSE(decode_sasl_initial_response("M\0"s + be32(0xfffffffe)).is_ok());
  CHECK_FALSE(decode_sasl_initial_response("M\0"s + be32(0x80000000) + "x").is_ok());
  CHECK_FALSE(decode_sasl_initial_response("M\0"s + be32(4) + "abc").is_ok());
}

TEST_CASE("messages: PasswordMessage and SASLResponse") {
  std::string out;
  encode_password_message(out, "md5abcdef");
  const Result<std::string_view> p = decode_password_message(only_frame(out, 'p', Sender::Client));
  REQUIRE(p.is_ok());
  CHECK(p.value() == "md5abcdef");
  check_malformed("secret\0"s, decode_password_message, Fault::Client);

  out.clear();
  encode_sasl_response(out, "c=biws,r=abc,p=xyz\0raw"s);
  CHECK(only_frame(out, 'p', Sender::Client) == "c=biws,r=abc,p=xyz\0raw"s);
}

TEST_CASE("messages: Sync, Flush, Terminate, ParseComplete, BindComplete, CloseComplete") {
  std::string out;
  encode_sync(out);
  CHECK(only_frame(out, 'S', Sender::Client).empty());
  out.clear();
  encode_flush(out);
  CHECK(only_frame(out, 'H', Sender::Client).empty());
  out.clear();
  encode_terminate(out);
  CHECK(only_frame(out, 'X', Sender::Client).empty());
  out.clear();
  encode_parse_complete(out);
  CHECK(only_frame(out, '1', Sender::Server).empty());
  out.clear();
  encode_bind_complete(out);
  CHECK(only_frame(out, '2', Sender::Server).empty());
  out.clear();
  encode_close_complete(out);
  CHECK(only_frame(out, '3', Sender::Server).empty());
}

TEST_CASE("messages: Authentication round trips and malformed bodies") {
  auto decode = [](const std::string& out) {
    return decode_authentication(only_frame(out, 'R', Sender::Server));
  };
  std::string out;
  encode_auth_ok(out);
  Result<AuthenticationMessage> ok = decode(out);
  REQUIRE(ok.is_ok());
  CHECK(ok.value().code == uint32_t(AuthRequest::Ok));
  CHECK(ok.value().data.empty());
  check_malformed(std::string(only_frame(out, 'R', Sender::Server)), decode_authentication, Fault::Server,
                  /*trailing_is_error=*/false);

  out.clear();
  encode_auth_cleartext(out);
  CHECK(decode(out).value().code == uint32_t(AuthRequest::CleartextPassword));

  out.clear();
  const char salt[4] = {'\x01', '\0', '\xff', 'z'};
  encode_auth_md5(out, salt);
  const Result<AuthenticationMessage> md5 = decode(out);
  REQUIRE(md5.is_ok());
  CHECK(md5.value().code == uint32_t(AuthRequest::Md5Password));
  CHECK(md5.value().data == std::string_view(salt, 4));
  check_malformed(std::string(only_frame(out, 'R', Sender::Server)), decode_authentication, Fault::Server);

  out.clear();
  encode_auth_sasl(out, {"SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"});
  const Result<AuthenticationMessage> sasl = decode(out);
  REQUIRE(sasl.is_ok());
  CHECK(sasl.value().code == uint32_t(AuthRequest::Sasl));
  CHECK(sasl.value().data == "SCRAM-SHA-256-PLUS\0SCRAM-SHA-256\0\0"s);

  out.clear();
  encode_auth_sasl_continue(out, "r=abc,s=c2FsdA==,i=4096");
  CHECK(decode(out).value().code == uint32_t(AuthRequest::SaslContinue));
  CHECK(decode(out).value().data == "r=abc,s=c2FsdA==,i=4096");

  out.clear();
  encode_auth_sasl_final(out, "v=sig");
  CHECK(decode(out).value().code == uint32_t(AuthRequest::SaslFinal));
  CHECK(decode(out).value().data == "v=sig");
}

TEST_CASE("messages: ParameterStatus round trip and malformed bodies") {
  std::string out;
  encode_parameter_status(out, "TimeZone", "UTC");
  const std::string body(only_frame(out, 'S', Sender::Server));
  const Result<ParameterStatus> m = decode_parameter_status(body);
  REQUIRE(m.is_ok());
  CHECK(m.value().name == "TimeZone");
  CHECK(m.value().value == "UTC");
  check_malformed(body, decode_parameter_status, Fault::Server);
}

TEST_CASE("messages: BackendKeyData round trip and malformed bodies") {
  std::string out;
  encode_backend_key_data(out, CancelKey{4242, 0x80000001});
  const std::string body(only_frame(out, 'K', Sender::Server));
  const Result<CancelKey> key = decode_backend_key_data(body);
  REQUIRE(key.is_ok());
  CHECK(key.value() == CancelKey{4242, 0x80000001});
  check_malformed(body, decode_backend_key_data, Fault::Server);
}

TEST_CASE("messages: ReadyForQuery round trip and malformed bodies") {
  for (char status : {'I', 'T', 'E'}) {
    std::string out;
    encode_ready_for_query(out, status);
    const Result<char> r = decode_ready_for_query(only_frame(out, 'Z', Sender::Server));
    REQUIRE(r.is_ok());
    CHECK(r.value() == status);
  }
  check_malformed("I", decode_ready_for_query, Fault::Server);
  CHECK_FALSE(decode_ready_for_query("X").is_ok());
}

TEST_CASE("messages: ready_for_query_status agrees with decode_ready_for_query") {
  for (const std::string body : {"I", "T", "E", "X", "", "II"}) {
    auto decoded = decode_ready_for_query(body);
    CHECK(ready_for_query_status(body) == (decoded ? *decoded : '\0'));
  }
}

TEST_CASE("messages: CommandComplete decode and malformed bodies") {
  const std::string body = "INSERT 0 5\0"s;  // decoded views point into it
  const Result<std::string_view> tag = decode_command_complete(body);
  REQUIRE(tag.is_ok());
  CHECK(tag.value() == "INSERT 0 5");
  check_malformed("SELECT 1\0"s, decode_command_complete, Fault::Server);
}

TEST_CASE("messages: ErrorResponse / NoticeResponse round trip and malformed bodies") {
  std::string out;
  encode_error(out, "FATAL", "08P01", "invalid message", "the detail", "a hint");
  const std::string body(only_frame(out, 'E', Sender::Server));
  CHECK(body == "SFATAL\0VFATAL\0C08P01\0Minvalid message\0Dthe detail\0Ha hint\0\0"s);
  const Result<ErrorFields> f = decode_error_fields(body);
  REQUIRE(f.is_ok());
  CHECK(f.value().severity == "FATAL");
  CHECK(f.value().sqlstate == "08P01");
  CHECK(f.value().message == "invalid message");
  check_malformed(body, decode_error_fields, Fault::Server);

  out.clear();
  encode_error(out, "NOTICE", "00000", "note", {}, {}, 'N');
  CHECK(only_frame(out, 'N', Sender::Server) == "SNOTICE\0VNOTICE\0C00000\0Mnote\0\0"s);

  // Localized S without V; missing fields are empty; unknown fields are skipped.
  const std::string german = "SFEHLER\0Mkaputt\0Pstuff\0\0"s;
  const Result<ErrorFields> partial = decode_error_fields(german);
  REQUIRE(partial.is_ok());
  CHECK(partial.value().severity == "FEHLER");
  CHECK(partial.value().sqlstate.empty());
  CHECK(partial.value().message == "kaputt");
  const std::string empty_list = "\0"s;
  const Result<ErrorFields> none = decode_error_fields(empty_list);
  REQUIRE(none.is_ok());
  CHECK(none.value().message.empty());
  CHECK_FALSE(decode_error_fields("Mno terminator"s).is_ok());
  CHECK_FALSE(decode_error_fields("Mfield\0"s).is_ok());
}

TEST_CASE("messages: DataRow decode and malformed bodies") {
  std::string out;
  encode_data_row(out, {std::string("42"), std::nullopt, std::string()});
  auto row = decode_data_row(only_frame(out, 'D', Sender::Server));
  REQUIRE(row.is_ok());
  REQUIRE(row->size() == 3);
  CHECK((*row)[0] == std::optional<std::string_view>("42"));
  CHECK_FALSE((*row)[1].has_value());
  CHECK((*row)[2] == std::optional<std::string_view>(""));
  check_malformed(std::string(only_frame(out, 'D', Sender::Server)), decode_data_row, Fault::Server);
  CHECK_FALSE(decode_data_row(be16(1) + be32(0xfffffffe)).is_ok());  // negative length other than -1
}

TEST_CASE("messages: CopyOutResponse decode and malformed bodies") {
  auto text = decode_copy_response("\0"s + be16(2) + be16(0) + be16(0));
  REQUIRE(text.is_ok());
  CHECK_FALSE(text->binary);
  CHECK(text->columns == 2);
  const std::string binary = "\1"s + be16(2) + be16(1) + be16(1);
  auto decoded = decode_copy_response(binary);
  REQUIRE(decoded.is_ok());
  CHECK(decoded->binary);
  check_malformed(binary, decode_copy_response, Fault::Server);
  CHECK_FALSE(decode_copy_response("\2"s + be16(0)).is_ok());            // format neither 0 nor 1
  CHECK_FALSE(decode_copy_response("\0"s + be16(1) + be16(1)).is_ok());  // binary column in text
}

TEST_CASE("messages: ErrorResponse field list round trip, a field rewritten") {
  std::string out;
  encode_error(out, "ERROR", "22P04", "bad", "detail");
  auto fields = decode_error_field_list(only_frame(out, 'E', Sender::Server));
  REQUIRE(fields.is_ok());
  std::string again;
  encode_error_field_list(again, 'E', *fields);
  CHECK(again == out);
  for (ErrorField& field : *fields) {
    if (field.code == 'M') field.value = "rewritten";
  }
  again.clear();
  encode_error_field_list(again, 'N', *fields);
  auto rewritten = decode_error_fields(only_frame(again, 'N', Sender::Server));
  REQUIRE(rewritten.is_ok());
  CHECK(rewritten->message == "rewritten");
  CHECK(rewritten->sqlstate == "22P04");
  check_malformed(std::string(only_frame(out, 'E', Sender::Server)), decode_error_field_list, Fault::Server);
}

TEST_CASE("messages: random bodies never crash a decoder") {
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(state >> 33);
  };
  for (int i = 0; i < 3000; ++i) {
    std::string body(next() % 24, '\0');
    for (char& c : body) {
      const uint32_t r = next() % 8;
      c = r < 3 ? '\0' : r < 5 ? '\xff' : static_cast<char>(next());
    }
    Exact exact(body);
    const std::string_view v = exact.view();
    (void)decode_parse(v);
    (void)decode_bind(v);
    (void)decode_target(v);
    (void)decode_execute(v);
    (void)decode_query(v);
    (void)decode_sasl_initial_response(v);
    (void)decode_password_message(v);
    (void)decode_authentication(v);
    (void)decode_parameter_status(v);
    (void)decode_backend_key_data(v);
    (void)decode_ready_for_query(v);
    (void)decode_command_complete(v);
    (void)decode_error_fields(v);
    (void)decode_error_field_list(v);
    (void)decode_data_row(v);
    (void)decode_copy_response(v);
    (void)executes_every_row(v);
    (void)describes_portal(v);
  }
}

}  // namespace sw::wire
