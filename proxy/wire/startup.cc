// Startup-phase packets. parse_startup_packet() takes the body after the length word (as returned
// by read_startup_packet) and accepts exactly:
//   SSLRequest / GSSENCRequest: code only (body 4 bytes);
//   CancelRequest: code, pid, secret (body 12 bytes);
//   StartupMessage 3.x: version, then name\0value\0 pairs, then one final \0 as the last byte;
//   names starting with "_pq_." are protocol options, kept apart from the parameters.
// Everything else is an 08P01 client error, except a missing or empty "user" (28000, as
// PostgreSQL). Error messages never quote parameter values (they may hold secrets).
#include "wire/startup.h"

#include <cstring>

#include "common/bytes.h"
#include "wire/frame_reader.h"
#include "wire/message_writer.h"

namespace sw::wire {
namespace {

constexpr size_t kCodeSize = 4;
constexpr size_t kCancelBodySize = 12;  // code, pid, secret
constexpr std::string_view kProtocolOptionPrefix = "_pq_.";
constexpr uint32_t kMajorVersion3 = 3;

Status protocol_error(std::string message) { return Status::client("08P01", std::move(message)); }

Status fixed_size_error(const char* what, size_t body_size, size_t expected) {
  return protocol_error(std::string("invalid ") + what + " length " + std::to_string(body_size + 4) +
                        " (expected " + std::to_string(expected + 4) + ")");
}

// Reads a NUL-terminated string starting at `pos`; advances `pos` past the NUL.
// Returns false when there is no terminator before the end of `body`.
bool read_cstr(std::string_view body, size_t& pos, std::string_view& out) {
  if (pos >= body.size()) return false;
  const void* nul = std::memchr(body.data() + pos, '\0', body.size() - pos);
  if (nul == nullptr) return false;
  const size_t end = static_cast<size_t>(static_cast<const char*>(nul) - body.data());
  out = body.substr(pos, end - pos);
  pos = end + 1;
  return true;
}

// name\0value\0 ... \0, starting right after the protocol version.
Result<StartupPacket> parse_parameters(std::string_view body, StartupPacket packet) {
  size_t pos = kCodeSize;
  for (;;) {
    if (pos >= body.size()) {
      return protocol_error("invalid startup packet layout: expected terminator as last byte");
    }
    if (body[pos] == '\0') {
      if (pos + 1 != body.size()) {
        return protocol_error("invalid startup packet layout: empty parameter name at offset " +
                              std::to_string(pos + 4));
      }
      break;
    }
    std::string_view name;
    std::string_view value;
    if (!read_cstr(body, pos, name)) {
      return protocol_error("invalid startup packet layout: parameter name has no terminator");
    }
    if (!read_cstr(body, pos, value)) {
      return protocol_error(
          "invalid startup packet layout: value of a parameter has no "
          "terminator");
    }
    if (name.starts_with(kProtocolOptionPrefix)) {
      packet.protocol_options.emplace_back(name);
    } else {
      packet.params.emplace_back(std::string(name), std::string(value));
    }
  }
  if (packet.param("user").empty()) {
    return Status::client("28000", "no PostgreSQL user name specified in startup packet");
  }
  return packet;
}

}  // namespace

bool StartupPacket::needs_protocol_negotiation() const {
  return kind == StartupKind::Startup && (protocol > kProtocolVersion3 || !protocol_options.empty());
}

std::string_view StartupPacket::param(std::string_view name) const {
  // Last occurrence wins, as in PostgreSQL (a later parameter overrides an earlier one).
  for (auto it = params.rbegin(); it != params.rend(); ++it) {
    if (it->first == name) return it->second;
  }
  return {};
}

Result<StartupPacket> parse_startup_packet(std::string_view body) {
  if (body.size() < kCodeSize) {
    return protocol_error("invalid length of startup packet: " + std::to_string(body.size() + 4));
  }
  StartupPacket packet;
  const uint32_t code = load_be32(body.data());
  packet.protocol = code;

  switch (code) {
    case kSslRequestCode:
      if (body.size() != kCodeSize) return fixed_size_error("SSLRequest", body.size(), kCodeSize);
      packet.kind = StartupKind::SslRequest;
      return packet;
    case kGssEncRequestCode:
      if (body.size() != kCodeSize) {
        return fixed_size_error("GSSENCRequest", body.size(), kCodeSize);
      }
      packet.kind = StartupKind::GssEncRequest;
      return packet;
    case kCancelRequestCode:
      if (body.size() != kCancelBodySize) {
        return fixed_size_error("CancelRequest", body.size(), kCancelBodySize);
      }
      packet.kind = StartupKind::CancelRequest;
      packet.cancel.pid = load_be32(body.data() + 4);
      packet.cancel.secret = load_be32(body.data() + 8);
      return packet;
    default:
      if ((code >> 16) == kMajorVersion3) {
        packet.kind = StartupKind::Startup;
        return parse_parameters(body, std::move(packet));
      }
      return protocol_error("unsupported frontend protocol " + std::to_string(code >> 16) + "." +
                            std::to_string(code & 0xffff) + ": server supports 3.0");
  }
}

std::string encode_startup_message(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string out;
  MessageWriter w(out, Limits::kMaxStartupPacket);
  w.begin_untyped().int32(kProtocolVersion3);
  for (const auto& [name, value] : params) w.cstr(name).cstr(value);
  w.int8(0).end();
  return out;
}

std::string encode_ssl_request() {
  std::string out;
  MessageWriter(out).begin_untyped().int32(kSslRequestCode).end();
  return out;
}

std::string encode_cancel_request(CancelKey key) {
  std::string out;
  MessageWriter(out).begin_untyped().int32(kCancelRequestCode).int32(key.pid).int32(key.secret).end();
  return out;
}

std::string encode_negotiate_protocol_version(const std::vector<std::string>& unrecognized_options) {
  std::string out;
  MessageWriter w(out);
  w.begin('v').int32(kProtocolVersion3).int32(static_cast<uint32_t>(unrecognized_options.size()));
  for (const std::string& name : unrecognized_options) w.cstr(name);
  w.end();
  return out;
}

}  // namespace sw::wire
