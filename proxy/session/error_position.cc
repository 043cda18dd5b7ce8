#include "session/error_position.h"

#include <charconv>

#include "wire/message_writer.h"

namespace sw::session {
namespace {

bool continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// The byte offset of the character at 1-based `position`; nullopt past the end.
std::optional<uint32_t> byte_of(std::string_view text, uint32_t position) {
  if (position == 0) return std::nullopt;
  uint32_t characters = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (continuation(text[i])) continue;
    if (++characters == position) return static_cast<uint32_t>(i);
  }
  return std::nullopt;
}

// The 1-based position of the character at byte `offset`.
uint32_t position_of(std::string_view text, uint32_t offset) {
  uint32_t characters = 0;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (!continuation(text[i])) ++characters;
  }
  return characters + 1;
}

// Calls visit(type, value) for each field; false when the body is not a field list.
template <typename Visit>
bool for_each_field(std::string_view body, Visit visit) {
  size_t i = 0;
  while (i < body.size() && body[i] != '\0') {
    const char type = body[i++];
    const size_t end = body.find('\0', i);
    if (end == std::string_view::npos) return false;
    visit(type, body.substr(i, end - i));
    i = end + 1;
  }
  return i < body.size();
}

}  // namespace

std::optional<uint32_t> error_position(std::string_view body) {
  std::optional<uint32_t> position;
  const bool ok = for_each_field(body, [&](char type, std::string_view value) {
    uint32_t n = 0;
    auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (type == 'P' && error == std::errc() && end == value.data() + value.size()) position = n;
  });
  return ok ? position : std::nullopt;
}

std::string error_with_position(std::string_view body, std::optional<uint32_t> position) {
  if (!error_position(body)) return {};
  std::string out;
  wire::MessageWriter writer(out);
  writer.begin('E');
  for_each_field(body, [&](char type, std::string_view value) {
    if (type != 'P') {
      writer.int8(static_cast<uint8_t>(type)).cstr(value);
    } else if (position) {
      writer.int8('P').cstr(std::to_string(*position));
    }
  });
  writer.int8(0).end();
  return writer.ok() ? out : std::string();
}

std::optional<uint32_t> client_position(uint32_t position, std::string_view server_sql,
                                        std::string_view client_sql, const parser::ExpandedSql& rewrite) {
  const std::optional<uint32_t> server_byte = byte_of(server_sql, position);
  if (!server_byte) return std::nullopt;
  const std::optional<uint32_t> client_byte = rewrite.source_offset(*server_byte);
  if (!client_byte || *client_byte >= client_sql.size()) return std::nullopt;
  return position_of(client_sql, *client_byte);
}

}  // namespace sw::session
