// Decoders and encoders for the messages the proxy looks inside or writes itself.
//
// Decoders: every read is bounds-checked; strings must be NUL-terminated inside the body; counts
// must match the bytes present; a body with bytes left over after the last field is malformed
// (as PostgreSQL's pq_getmsgend). Errors are 08P01 with the fault of the sender: Client for
// frontend messages, Server for backend messages. Views point into the body passed in.
//
// Encoders: append whole messages through MessageWriter. A message that cannot be represented
// (a string containing NUL, more than 65535 Parse parameter types, a length past INT32_MAX)
// leaves `out` unchanged.
#include "wire/messages.h"

#include "common/bytes.h"
#include "wire/bind_rest.h"
#include "wire/byte_reader.h"
#include "wire/message_writer.h"

namespace sw::wire {
namespace {

constexpr uint32_t kNullLength = 0xffffffffu;  // int32 -1: absent value
constexpr uint32_t kMaxLength = 0x7fffffffu;
constexpr uint64_t kMaxWrittenLength = uint64_t{1} << 30;  // MessageWriter's default limit

Status client_error(const char* message_name, const std::string& reason) {
  return Status::client("08P01", std::string("invalid ") + message_name + " message: " + reason);
}

Status server_error(const char* message_name, const std::string& reason) {
  return Status::server("08P01", std::string("invalid ") + message_name + " message: " + reason);
}

const char* const kTrailing = "unexpected bytes after the last field";

}  // namespace

// ---- frontend ---------------------------------------------------------------------------------

Result<ParseMessage> decode_parse(std::string_view body) {
  ByteReader r(body);
  ParseMessage m;
  if (!r.cstr(m.statement)) return client_error("Parse", "statement name has no terminator");
  if (!r.cstr(m.query)) return client_error("Parse", "query has no terminator");
  uint16_t count = 0;
  if (!r.u16(count)) return client_error("Parse", "parameter type count missing");
  if (r.remaining() != uint64_t{count} * 4) {
    return client_error("Parse", std::to_string(count) + " parameter types declared but " +
                                     std::to_string(r.remaining()) + " bytes follow");
  }
  m.param_types.reserve(count);
  for (uint16_t i = 0; i < count; ++i) {
    uint32_t oid = 0;
    r.u32(oid);  // cannot fail: length checked above
    m.param_types.push_back(oid);
  }
  return m;
}

void encode_parse(std::string& out, std::string_view statement, std::string_view query,
                  const std::vector<uint32_t>& param_types) {
  if (param_types.size() > 0xffff) return;  // not representable: int16 count on the wire
  MessageWriter w(out);
  w.begin('P').cstr(statement).cstr(query).int16(static_cast<uint16_t>(param_types.size()));
  for (uint32_t oid : param_types) w.int32(oid);
  w.end();
}

Result<BindMessage> decode_bind(std::string_view body) {
  ByteReader r(body);
  BindMessage m;
  if (!r.cstr(m.portal)) return client_error("Bind", "portal name has no terminator");
  if (!r.cstr(m.statement)) return client_error("Bind", "statement name has no terminator");
  m.rest = r.rest();
  if (std::string why; !bind_rest_is_well_formed(m.rest, &why)) return client_error("Bind", why);
  return m;
}

// Written in one pass, without MessageWriter's per-field checks and back-patched length (every
// Bind of a prepared statement in transaction pooling is renamed), under its rules: a name with
// a NUL, or a message longer than its default limit (1 GiB), leaves `out` unchanged.
void encode_bind(std::string& out, std::string_view portal, std::string_view statement,
                 std::string_view rest) {
  if (portal.find('\0') != std::string_view::npos || statement.find('\0') != std::string_view::npos) return;
  const uint64_t length =
      4 + uint64_t{portal.size()} + 1 + uint64_t{statement.size()} + 1 + uint64_t{rest.size()};
  if (length > kMaxWrittenLength) return;
  out.push_back('B');
  append_be32(out, static_cast<uint32_t>(length));
  out.append(portal).push_back('\0');
  out.append(statement).push_back('\0');
  out.append(rest);
}

void encode_bind_renamed(std::string& out, const BindMessage& bind, std::string_view statement) {
  encode_bind(out, bind.portal, statement, bind.rest);
}

Result<ExecuteMessage> decode_execute(std::string_view body) {
  ByteReader r(body);
  ExecuteMessage m;
  if (!r.cstr(m.portal)) return client_error("Execute", "portal name has no terminator");
  if (!r.u32(m.max_rows)) return client_error("Execute", "row limit missing");
  if (!r.at_end()) return client_error("Execute", kTrailing);
  return m;
}

void encode_execute(std::string& out, std::string_view portal, uint32_t max_rows) {
  MessageWriter(out).begin('E').cstr(portal).int32(max_rows).end();
}

bool executes_every_row(std::string_view body) {
  ByteReader r(body);
  std::string_view portal;
  uint32_t max_rows = 0;
  return r.cstr(portal) && r.u32(max_rows) && r.at_end() && max_rows == 0;
}

bool describes_portal(std::string_view body) {
  ByteReader r(body);
  char kind = 0;
  std::string_view name;
  return r.byte(kind) && kind == 'P' && r.cstr(name) && r.at_end();
}

Result<TargetMessage> decode_target(std::string_view body) {
  ByteReader r(body);
  TargetMessage m;
  if (!r.byte(m.kind)) return client_error("Describe/Close", "kind missing");
  if (m.kind != 'S' && m.kind != 'P') {
    return client_error("Describe/Close", "kind must be 'S' or 'P'");
  }
  if (!r.cstr(m.name)) return client_error("Describe/Close", "name has no terminator");
  if (!r.at_end()) return client_error("Describe/Close", kTrailing);
  return m;
}

void encode_target(std::string& out, char type, char kind, std::string_view name) {
  MessageWriter(out).begin(type).int8(static_cast<uint8_t>(kind)).cstr(name).end();
}

Result<std::string_view> decode_query(std::string_view body) {
  ByteReader r(body);
  std::string_view sql;
  if (!r.cstr(sql)) return client_error("Query", "query string has no terminator");
  if (!r.at_end()) return client_error("Query", kTrailing);
  return sql;
}

void encode_query(std::string& out, std::string_view sql) { MessageWriter(out).begin('Q').cstr(sql).end(); }

Result<SaslInitialResponse> decode_sasl_initial_response(std::string_view body) {
  ByteReader r(body);
  SaslInitialResponse m;
  if (!r.cstr(m.mechanism)) {
    return client_error("SASLInitialResponse", "mechanism name has no terminator");
  }
  uint32_t length = 0;
  if (!r.u32(length)) return client_error("SASLInitialResponse", "data length missing");
  if (length != kNullLength) {
    if (length > kMaxLength || length > r.remaining()) {
      return client_error("SASLInitialResponse", "invalid data length");
    }
    r.bytes(length, m.data);
  }
  if (!r.at_end()) return client_error("SASLInitialResponse", kTrailing);
  return m;
}

void encode_sasl_initial_response(std::string& out, std::string_view mechanism, std::string_view data) {
  if (data.size() > kMaxLength) return;
  MessageWriter(out).begin('p').cstr(mechanism).int32(static_cast<uint32_t>(data.size())).bytes(data).end();
}

void encode_password_message(std::string& out, std::string_view payload) {
  MessageWriter(out).begin('p').cstr(payload).end();
}

void encode_sasl_response(std::string& out, std::string_view data) {
  MessageWriter(out).begin('p').bytes(data).end();
}

Result<std::string_view> decode_password_message(std::string_view body) {
  ByteReader r(body);
  std::string_view password;
  if (!r.cstr(password)) return client_error("PasswordMessage", "password has no terminator");
  if (!r.at_end()) return client_error("PasswordMessage", kTrailing);
  return password;
}

void encode_flush(std::string& out) { MessageWriter(out).begin('H').end(); }

void encode_sync(std::string& out) { MessageWriter(out).begin('S').end(); }
void encode_terminate(std::string& out) { MessageWriter(out).begin('X').end(); }

// ---- backend ----------------------------------------------------------------------------------

Result<AuthenticationMessage> decode_authentication(std::string_view body) {
  ByteReader r(body);
  AuthenticationMessage m;
  if (!r.u32(m.code)) return server_error("Authentication", "request code missing");
  m.data = r.rest();
  if (m.code == static_cast<uint32_t>(AuthRequest::Md5Password) && m.data.size() != 4) {
    return server_error("Authentication", "MD5 salt must be 4 bytes, got " + std::to_string(m.data.size()));
  }
  return m;
}

namespace {
void encode_auth(std::string& out, AuthRequest code, std::string_view data) {
  MessageWriter(out).begin('R').int32(static_cast<uint32_t>(code)).bytes(data).end();
}
}  // namespace

void encode_auth_ok(std::string& out) { encode_auth(out, AuthRequest::Ok, {}); }
void encode_auth_cleartext(std::string& out) { encode_auth(out, AuthRequest::CleartextPassword, {}); }
void encode_auth_md5(std::string& out, const char salt[4]) {
  encode_auth(out, AuthRequest::Md5Password, std::string_view(salt, 4));
}

void encode_auth_sasl(std::string& out, const std::vector<std::string>& mechanisms) {
  MessageWriter w(out);
  w.begin('R').int32(static_cast<uint32_t>(AuthRequest::Sasl));
  for (const std::string& mechanism : mechanisms) w.cstr(mechanism);
  w.int8(0).end();
}

void encode_auth_sasl_continue(std::string& out, std::string_view data) {
  encode_auth(out, AuthRequest::SaslContinue, data);
}
void encode_auth_sasl_final(std::string& out, std::string_view data) {
  encode_auth(out, AuthRequest::SaslFinal, data);
}

Result<ParameterStatus> decode_parameter_status(std::string_view body) {
  ByteReader r(body);
  ParameterStatus m;
  if (!r.cstr(m.name)) return server_error("ParameterStatus", "name has no terminator");
  if (!r.cstr(m.value)) return server_error("ParameterStatus", "value has no terminator");
  if (!r.at_end()) return server_error("ParameterStatus", kTrailing);
  return m;
}

void encode_parameter_status(std::string& out, std::string_view name, std::string_view value) {
  MessageWriter(out).begin('S').cstr(name).cstr(value).end();
}

Result<CancelKey> decode_backend_key_data(std::string_view body) {
  ByteReader r(body);
  CancelKey key;
  if (!r.u32(key.pid) || !r.u32(key.secret) || !r.at_end()) {
    return server_error("BackendKeyData", "body must be 8 bytes, got " + std::to_string(body.size()));
  }
  return key;
}

void encode_backend_key_data(std::string& out, CancelKey key) {
  MessageWriter(out).begin('K').int32(key.pid).int32(key.secret).end();
}

Result<char> decode_ready_for_query(std::string_view body) {
  ByteReader r(body);
  char status = 0;
  if (!r.byte(status) || !r.at_end()) {
    return server_error("ReadyForQuery", "body must be 1 byte, got " + std::to_string(body.size()));
  }
  if (status != 'I' && status != 'T' && status != 'E') {
    return server_error("ReadyForQuery", "unknown transaction status");
  }
  return status;
}

void encode_ready_for_query(std::string& out, char status) {
  MessageWriter(out).begin('Z').int8(static_cast<uint8_t>(status)).end();
}

Result<CopyResponse> decode_copy_response(std::string_view body) {
  ByteReader r(body);
  uint8_t format = 0;
  CopyResponse m;
  if (!r.u8(format) || format > 1) return server_error("CopyResponse", "overall format missing or not 0/1");
  m.binary = format == 1;
  if (!r.u16(m.columns)) return server_error("CopyResponse", "column count missing");
  for (uint16_t i = 0; i < m.columns; ++i) {
    uint16_t column_format = 0;
    if (!r.u16(column_format) || column_format > 1 || (!m.binary && column_format != 0)) {
      return server_error("CopyResponse", "column format codes truncated or not 0/1");
    }
  }
  if (!r.at_end()) return server_error("CopyResponse", kTrailing);
  return m;
}

Result<std::string_view> decode_command_complete(std::string_view body) {
  ByteReader r(body);
  std::string_view tag;
  if (!r.cstr(tag)) return server_error("CommandComplete", "command tag has no terminator");
  if (!r.at_end()) return server_error("CommandComplete", kTrailing);
  return tag;
}

Result<ErrorFields> decode_error_fields(std::string_view body) {
  ByteReader r(body);
  ErrorFields fields;
  std::string_view localized_severity;
  for (;;) {
    char code = 0;
    if (!r.byte(code)) return server_error("ErrorResponse", "field list has no terminator");
    if (code == '\0') break;
    std::string_view value;
    if (!r.cstr(value)) return server_error("ErrorResponse", "field value has no terminator");
    switch (code) {
      case 'S': localized_severity = value; break;
      case 'V': fields.severity = value; break;  // non-localized: preferred when present
      case 'C': fields.sqlstate = value; break;
      case 'M': fields.message = value; break;
      default: break;  // detail, hint, position, ...: not needed by the proxy
    }
  }
  if (!r.at_end()) return server_error("ErrorResponse", kTrailing);
  if (fields.severity.empty()) fields.severity = localized_severity;
  return fields;
}

Result<std::vector<ErrorField>> decode_error_field_list(std::string_view body) {
  ByteReader r(body);
  std::vector<ErrorField> fields;
  for (;;) {
    ErrorField field;
    if (!r.byte(field.code)) return server_error("ErrorResponse", "field list has no terminator");
    if (field.code == '\0') break;
    if (!r.cstr(field.value)) return server_error("ErrorResponse", "field value has no terminator");
    fields.push_back(field);
  }
  if (!r.at_end()) return server_error("ErrorResponse", kTrailing);
  return fields;
}

void encode_error_field_list(std::string& out, char type, const std::vector<ErrorField>& fields) {
  MessageWriter w(out);
  w.begin(type);
  for (const ErrorField& field : fields) w.int8(static_cast<uint8_t>(field.code)).cstr(field.value);
  w.int8(0).end();
}

void encode_error(std::string& out, std::string_view severity, std::string_view sqlstate,
                  std::string_view message, std::string_view detail, std::string_view hint, char type) {
  MessageWriter w(out);
  w.begin(type);
  w.int8('S').cstr(severity).int8('V').cstr(severity);
  w.int8('C').cstr(sqlstate).int8('M').cstr(message);
  if (!detail.empty()) w.int8('D').cstr(detail);
  if (!hint.empty()) w.int8('H').cstr(hint);
  w.int8(0).end();
}

void encode_command_complete(std::string& out, std::string_view tag) {
  MessageWriter(out).begin('C').cstr(tag).end();
}

Result<std::vector<std::optional<std::string_view>>> decode_data_row(std::string_view body) {
  ByteReader r(body);
  uint16_t columns = 0;
  if (!r.u16(columns)) return server_error("DataRow", "column count missing");
  std::vector<std::optional<std::string_view>> values;
  values.reserve(columns);
  for (uint16_t i = 0; i < columns; ++i) {
    uint32_t length = 0;
    std::string_view value;
    if (!r.u32(length)) return server_error("DataRow", "column " + std::to_string(i + 1) + " length missing");
    if (length == kNullLength) {
      values.emplace_back(std::nullopt);
      continue;
    }
    if (length > kMaxLength || !r.bytes(length, value)) {
      return server_error("DataRow", "column " + std::to_string(i + 1) + " has invalid length");
    }
    values.emplace_back(value);
  }
  if (!r.at_end()) return server_error("DataRow", kTrailing);
  return values;
}

void encode_data_row(std::string& out, const std::vector<std::optional<std::string>>& values) {
  MessageWriter w(out);
  w.begin('D').int16(static_cast<uint16_t>(values.size()));
  for (const auto& value : values) {
    if (!value) {
      w.int32(static_cast<uint32_t>(-1));
      continue;
    }
    w.int32(static_cast<uint32_t>(value->size())).bytes(*value);
  }
  w.end();
}

// Bodiless messages of a fixed 5 bytes, appended whole (no length to back-patch): the proxy
// writes ParseComplete and BindComplete for batches it answers itself or may answer.
void encode_parse_complete(std::string& out) { out.append("1\0\0\0\4", 5); }
void encode_bind_complete(std::string& out) { out.append("2\0\0\0\4", 5); }
void encode_close_complete(std::string& out) { out.append("3\0\0\0\4", 5); }

}  // namespace sw::wire
