// The shards' batch of an UPDATE that moves rows between shards (docs/architecture.md §6.3).
#include "session/key_move_request.h"

#include "wire/bind_rest.h"
#include "wire/messages.h"

namespace sw::session {

std::string key_move_request(std::string_view client_sql, std::string_view move_sql,
                             const std::vector<uint32_t>& types, std::string_view bind_rest) {
  std::string out;
  wire::encode_parse(out, "", client_sql, types);
  wire::encode_target(out, 'D', 'S', "");
  wire::encode_parse(out, "", move_sql, types);
  if (bind_rest.empty()) {
    std::string no_values;
    wire::encode_bind_rest(no_values, wire::BindRest{});
    wire::encode_bind(out, "", "", no_values);
  } else {
    wire::encode_bind(out, "", "", bind_rest);
  }
  wire::encode_target(out, 'D', 'P', "");
  wire::encode_execute(out, "", 0);
  wire::encode_sync(out);
  return out;
}

std::string text_results_bind_rest(std::string_view rest) {
  auto bind = wire::decode_bind_rest(rest);
  if (!bind) return std::string(rest);  // unreachable: decode_bind checked it
  bind->result_formats.clear();
  std::string out;
  wire::encode_bind_rest(out, *bind);
  return out;
}

}  // namespace sw::session
