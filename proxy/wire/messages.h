// Typed views of the protocol messages the proxy needs to look inside, and encoders for the
// messages it writes itself. Decoders take a frame body (after type and length) and return a view
// into it; a malformed body is an 08P01 error with the fault of the sender (Status::client for
// frontend messages, Status::server for backend ones). Malformed includes: a string without its
// NUL inside the body, counts or lengths that do not match the bytes present, and bytes left
// over after the last field.
// Encoders append one whole message to `out`; a message that cannot be represented (a string
// with an embedded NUL, more than 65535 Parse parameter types, a length past INT32_MAX) leaves
// `out` unchanged.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "wire/startup.h"

namespace sw::wire {

// ---- frontend (client -> server) ----------------------------------------------------------

struct ParseMessage {          // 'P'
  std::string_view statement;  // "" = unnamed
  std::string_view query;
  std::vector<uint32_t> param_types;
};
Result<ParseMessage> decode_parse(std::string_view body);
void encode_parse(std::string& out, std::string_view statement, std::string_view query,
                  const std::vector<uint32_t>& param_types);

struct BindMessage {  // 'B'
  std::string_view portal;
  std::string_view statement;
  std::string_view rest;  // everything after the statement name, unchanged
  // Kept raw; the router decodes the parameter values when it routes on one
  // (decode_bind_values, bind_values.h). decode_bind already checked the structure (format codes,
  // parameter lengths, result formats, no extra bytes; 0, 1 or one-per-parameter format codes),
  // so a later walk can trust the counts.
};
Result<BindMessage> decode_bind(std::string_view body);
// A Bind from its names and its fields after them (a BindMessage::rest, or bind_rest.h's
// encode_bind_rest).
void encode_bind(std::string& out, std::string_view portal, std::string_view statement,
                 std::string_view rest);
// Re-encodes a Bind with another statement name (transaction-mode prepared statements).
void encode_bind_renamed(std::string& out, const BindMessage& bind, std::string_view statement);

struct ExecuteMessage {     // 'E'
  std::string_view portal;  // "" = unnamed
  uint32_t max_rows = 0;    // as sent: 0 runs every row (so does a negative int32, in PostgreSQL)
};
Result<ExecuteMessage> decode_execute(std::string_view body);
void encode_execute(std::string& out, std::string_view portal, uint32_t max_rows);
// A well-formed Execute body with no row limit (a malformed one: false).
bool executes_every_row(std::string_view body);
// A well-formed Describe body of a portal (a malformed one: false).
bool describes_portal(std::string_view body);

struct TargetMessage {  // 'D' Describe and 'C' Close: kind 'S' (statement) or 'P' (portal)
  char kind = 'S';
  std::string_view name;
};
Result<TargetMessage> decode_target(std::string_view body);
void encode_target(std::string& out, char type, char kind, std::string_view name);

// Query 'Q': the SQL text without its terminator.
Result<std::string_view> decode_query(std::string_view body);
void encode_query(std::string& out, std::string_view sql);

struct SaslInitialResponse {  // 'p' in SASL exchange, first message
  std::string_view mechanism;
  std::string_view data;  // may be empty; length -1 means absent and is treated as empty
                          // (the encoder writes the length of `data`, never -1)
};
Result<SaslInitialResponse> decode_sasl_initial_response(std::string_view body);
void encode_sasl_initial_response(std::string& out, std::string_view mechanism, std::string_view data);
// PasswordMessage / SASLResponse: 'p' with raw payload.
void encode_password_message(std::string& out, std::string_view payload);  // adds NUL (cleartext/md5)
void encode_sasl_response(std::string& out, std::string_view data);        // raw bytes
// PasswordMessage body -> password without the NUL terminator.
Result<std::string_view> decode_password_message(std::string_view body);

void encode_flush(std::string& out);  // 'H'
void encode_sync(std::string& out);
void encode_terminate(std::string& out);

// ---- backend (server -> client) -----------------------------------------------------------

enum class AuthRequest : uint32_t {
  Ok = 0,
  CleartextPassword = 3,
  Md5Password = 5,
  Sasl = 10,
  SaslContinue = 11,
  SaslFinal = 12,
};
// decode_authentication accepts any code; only Md5Password checks its data (exactly 4 bytes).
struct AuthenticationMessage {  // 'R'
  uint32_t code = 0;
  std::string_view data;  // md5: 4-byte salt; SASL: mechanism list (NUL-separated);
                          // SASLContinue/Final: server message
};
Result<AuthenticationMessage> decode_authentication(std::string_view body);
void encode_auth_ok(std::string& out);
void encode_auth_cleartext(std::string& out);
void encode_auth_md5(std::string& out, const char salt[4]);
void encode_auth_sasl(std::string& out, const std::vector<std::string>& mechanisms);
void encode_auth_sasl_continue(std::string& out, std::string_view data);
void encode_auth_sasl_final(std::string& out, std::string_view data);

struct ParameterStatus {  // 'S'
  std::string_view name;
  std::string_view value;
};
Result<ParameterStatus> decode_parameter_status(std::string_view body);
void encode_parameter_status(std::string& out, std::string_view name, std::string_view value);

Result<CancelKey> decode_backend_key_data(std::string_view body);  // 'K'
void encode_backend_key_data(std::string& out, CancelKey key);

// 'Z': transaction status 'I' idle, 'T' in transaction, 'E' failed transaction.
Result<char> decode_ready_for_query(std::string_view body);
// The same status, or '\0' for a malformed body: for the per-request path, which builds no Status.
inline char ready_for_query_status(std::string_view body) {
  const bool known = body.size() == 1 && (body.front() == 'I' || body.front() == 'T' || body.front() == 'E');
  return known ? body.front() : '\0';
}
void encode_ready_for_query(std::string& out, char status);

// 'H' CopyOutResponse, 'G' CopyInResponse, 'W' CopyBothResponse: the overall format and one
// format code per column (each 0 or 1; all 0 when the overall format is text).
struct CopyResponse {
  bool binary = false;
  uint16_t columns = 0;
};
Result<CopyResponse> decode_copy_response(std::string_view body);

// 'C': command tag without terminator ("SELECT 1", "ROLLBACK", ...).
Result<std::string_view> decode_command_complete(std::string_view body);
void encode_command_complete(std::string& out, std::string_view tag);

// 'D': one value per column (as sent: text or binary); nullopt is NULL. The column count must
// match the values present.
Result<std::vector<std::optional<std::string_view>>> decode_data_row(std::string_view body);
// 'D': one value per column, text format; nullopt is NULL.
void encode_data_row(std::string& out, const std::vector<std::optional<std::string>>& values);

// 'E' / 'N': field list. Missing fields are empty (a server may omit the SQLSTATE).
struct ErrorFields {
  std::string_view severity;  // 'V' (never localized) if present, else 'S' (localized)
  std::string_view sqlstate;  // 'C'
  std::string_view message;   // 'M'
};
Result<ErrorFields> decode_error_fields(std::string_view body);
// 'E' / 'N': every field in the order sent (its code byte and value), for a proxy that rewrites
// one; encode_error_field_list writes them back (a value with a NUL: `out` unchanged).
struct ErrorField {
  char code = 0;
  std::string_view value;
};
Result<std::vector<ErrorField>> decode_error_field_list(std::string_view body);
void encode_error_field_list(std::string& out, char type, const std::vector<ErrorField>& fields);
// ErrorResponse (type 'E') or NoticeResponse ('N') with S, V, C, M and optional D (detail) and H (hint).
void encode_error(std::string& out, std::string_view severity, std::string_view sqlstate,
                  std::string_view message, std::string_view detail = {}, std::string_view hint = {},
                  char type = 'E');

void encode_parse_complete(std::string& out);  // '1'
void encode_bind_complete(std::string& out);   // '2'
void encode_close_complete(std::string& out);  // '3'

}  // namespace sw::wire
