#include "mover/mover_types.h"

#include <algorithm>
#include <cstdio>

namespace sw::mover {

std::string lsn_text(Lsn lsn) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%X/%X", static_cast<unsigned>(lsn >> 32), static_cast<unsigned>(lsn));
  return buffer;
}

Result<Lsn> parse_lsn(std::string_view text) {
  size_t slash = text.find('/');
  auto hex = [](std::string_view part, uint64_t* out) {
    if (part.empty() || part.size() > 8) return false;
    uint64_t value = 0;
    for (char c : part) {
      int digit = (c >= '0' && c <= '9')   ? c - '0'
                  : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                  : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                                           : -1;
      if (digit < 0) return false;
      value = value * 16 + static_cast<uint64_t>(digit);
    }
    *out = value;
    return true;
  };
  uint64_t high = 0, low = 0;
  if (slash == std::string_view::npos || !hex(text.substr(0, slash), &high) ||
      !hex(text.substr(slash + 1), &low))
    return Status::server("22P02", "invalid WAL position \"" + std::string(text) + "\"");
  return (high << 32) | low;
}

namespace {
// A libpq keyword/value pair, quoted as libpq reads it.
std::string conninfo_pair(const std::string& key, const std::string& value) {
  std::string quoted;
  for (char c : value) {
    if (c == '\'' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return " " + key + "='" + quoted + "'";
}
}  // namespace

std::string mover_dsn(const config::Config& config, const config::Shard& shard) {
  // Later keywords win in libpq, so the overrides are appended.
  std::string dsn = shard.dsn;
  if (!config.mover.user.empty()) dsn += conninfo_pair("user", config.mover.user);
  if (!config.mover.password.empty()) dsn += conninfo_pair("password", config.mover.password);
  dsn += conninfo_pair("application_name", kMoverApplicationName);
  return dsn;
}

}  // namespace sw::mover
