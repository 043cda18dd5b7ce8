// Startup-phase packets: SSLRequest, GSSENCRequest, CancelRequest, StartupMessage v3.x.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace sw::wire {

constexpr uint32_t kProtocolVersion3 = 196608;  // 3.0, the newest version shardwire speaks
constexpr uint32_t kSslRequestCode = 80877103;
constexpr uint32_t kGssEncRequestCode = 80877104;
constexpr uint32_t kCancelRequestCode = 80877102;

enum class StartupKind { Startup, SslRequest, GssEncRequest, CancelRequest };

struct CancelKey {
  uint32_t pid = 0;
  uint32_t secret = 0;
  bool operator==(const CancelKey&) const = default;
};

struct StartupPacket {
  StartupKind kind = StartupKind::Startup;
  uint32_t protocol = 0;
  // StartupMessage parameters in the order sent ("user", "database", "options", GUCs...).
  std::vector<std::pair<std::string, std::string>> params;
  // Names of "_pq_." protocol options, in the order sent. They are not parameters: shardwire
  // knows none of them and reports each as unrecognized, as PostgreSQL 15 does.
  std::vector<std::string> protocol_options;
  CancelKey cancel;  // CancelRequest only

  // True when the client asked for a newer 3.x minor version or sent protocol options; the
  // server then answers NegotiateProtocolVersion before authentication and the login goes on.
  bool needs_protocol_negotiation() const;
  // Value of a parameter (the last one if sent twice, as PostgreSQL does), or empty.
  std::string_view param(std::string_view name) const;
};

// Parses a startup-phase packet body (after the length word). StartupMessage of any 3.x minor
// version is accepted (the session negotiates it down to 3.0). Errors are 08P01 client faults:
// a protocol major version other than 3, empty parameter name, missing terminators, data after the final
// terminator, wrong length for fixed-size requests; a missing or empty "user" is 28000.
Result<StartupPacket> parse_startup_packet(std::string_view body);

// Encoders (whole packets including the length word). encode_startup_message returns an empty
// string when the packet would exceed Limits::kMaxStartupPacket or a name/value contains NUL.
std::string encode_startup_message(const std::vector<std::pair<std::string, std::string>>& params);
std::string encode_ssl_request();
std::string encode_cancel_request(CancelKey key);
// 'v' NegotiateProtocolVersion as PostgreSQL 15 sends it: the newest version supported (3.0, as
// the whole version word), then the count and names of the unrecognized protocol options.
std::string encode_negotiate_protocol_version(const std::vector<std::string>& unrecognized_options);

}  // namespace sw::wire
