// parse_conninfo: libpq's keyword=value connection-string syntax (PQconnectdb's conninfo_parse).
//
// Contract:
//  * pairs are separated by whitespace; whitespace around '=' is allowed;
//  * a value is either unquoted (ends at whitespace; a backslash escapes the next character) or
//    single-quoted (may hold whitespace; \' and \\ are escapes); a later duplicate keyword wins;
//  * the keywords the proxy itself uses get typed fields; every other keyword that libpq knows is
//    kept verbatim in `other`; an unknown keyword is an error (libpq would refuse it later).
//  * error messages name keywords, never values: a DSN may hold a password, and a mis-quoted
//    password would otherwise leak into the log through the error text.
#include <algorithm>
#include <cctype>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>

#include "config/config.h"
#include "config/suggest.h"

namespace sw::config {
namespace {

// libpq's keywords up to PostgreSQL 17 (PQconndefaults()).
constexpr std::string_view kLibpqKeywords[] = {"host",
                                               "hostaddr",
                                               "port",
                                               "dbname",
                                               "user",
                                               "password",
                                               "passfile",
                                               "channel_binding",
                                               "connect_timeout",
                                               "client_encoding",
                                               "options",
                                               "application_name",
                                               "fallback_application_name",
                                               "keepalives",
                                               "keepalives_idle",
                                               "keepalives_interval",
                                               "keepalives_count",
                                               "tcp_user_timeout",
                                               "replication",
                                               "gssencmode",
                                               "sslmode",
                                               "sslnegotiation",
                                               "sslcompression",
                                               "sslcert",
                                               "sslkey",
                                               "sslpassword",
                                               "sslcertmode",
                                               "sslrootcert",
                                               "sslcrl",
                                               "sslcrldir",
                                               "sslsni",
                                               "requirepeer",
                                               "require_auth",
                                               "ssl_min_protocol_version",
                                               "ssl_max_protocol_version",
                                               "krbsrvname",
                                               "gsslib",
                                               "gssdelegation",
                                               "service",
                                               "target_session_attrs",
                                               "load_balance_hosts",
                                               "authtype",
                                               "scram_client_key"};

constexpr std::string_view kSslModes[] = {"disable", "allow",     "prefer",
                                          "require", "verify-ca", "verify-full"};

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

[[noreturn]] void unknown_keyword(const std::string& keyword) {
  throw std::invalid_argument("unknown keyword \"" + keyword + "\"" +
                              detail::did_you_mean(keyword, kLibpqKeywords));
}

int parse_port(const std::string& value) {
  bool digits = !value.empty() && value.size() <= 5 && std::all_of(value.begin(), value.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
  int port = digits ? std::stoi(value) : 0;
  if (port < 1 || port > 65535) throw std::invalid_argument("port must be an integer 1..65535");
  return port;
}

void assign(ConnInfo& info, const std::string& keyword, std::string value) {
  if (keyword == "host") {
    if (value.find(',') != std::string::npos) {
      throw std::invalid_argument("host: multiple hosts are not supported");
    }
    if (!value.empty()) info.host = std::move(value);
  } else if (keyword == "port") {
    if (!value.empty()) info.port = parse_port(value);
  } else if (keyword == "dbname") {
    info.dbname = std::move(value);
  } else if (keyword == "user") {
    info.user = std::move(value);
  } else if (keyword == "password") {
    info.password = std::move(value);
  } else if (keyword == "sslmode") {
    if (value.empty()) return;
    if (std::find(std::begin(kSslModes), std::end(kSslModes), value) == std::end(kSslModes)) {
      throw std::invalid_argument(
          "sslmode must be one of disable, allow, prefer, require, verify-ca, verify-full");
    }
    info.sslmode = std::move(value);
  } else if (keyword == "sslrootcert") {
    info.sslrootcert = std::move(value);
  } else if (std::find(std::begin(kLibpqKeywords), std::end(kLibpqKeywords), keyword) !=
             std::end(kLibpqKeywords)) {
    info.other[keyword] = std::move(value);
  } else {
    unknown_keyword(keyword);
  }
}

}  // namespace

ConnInfo parse_conninfo(const std::string& dsn) {
  if (dsn.rfind("postgresql://", 0) == 0 || dsn.rfind("postgres://", 0) == 0) {
    throw std::invalid_argument("URI connection strings are not supported; use keyword=value pairs");
  }
  ConnInfo info;
  size_t pos = 0;
  const size_t n = dsn.size();
  while (true) {
    while (pos < n && is_space(dsn[pos])) ++pos;
    if (pos >= n) break;

    // Keyword: up to '=' or whitespace.
    size_t start = pos;
    while (pos < n && dsn[pos] != '=' && !is_space(dsn[pos])) ++pos;
    std::string keyword = dsn.substr(start, pos - start);
    while (pos < n && is_space(dsn[pos])) ++pos;
    if (pos >= n || dsn[pos] != '=') {
      // The word may be half of a mis-quoted password: say where, not what.
      throw std::invalid_argument("missing \"=\" after a keyword at offset " + std::to_string(start));
    }
    if (keyword.empty()) {
      throw std::invalid_argument("missing keyword before \"=\" at offset " + std::to_string(pos));
    }
    ++pos;  // '='
    while (pos < n && is_space(dsn[pos])) ++pos;

    std::string value;
    if (pos < n && dsn[pos] == '\'') {
      ++pos;
      bool closed = false;
      while (pos < n) {
        char c = dsn[pos++];
        if (c == '\\') {
          if (pos < n) value.push_back(dsn[pos++]);
        } else if (c == '\'') {
          closed = true;
          break;
        } else {
          value.push_back(c);
        }
      }
      if (!closed) {
        throw std::invalid_argument("unterminated quoted value for keyword \"" + keyword + "\"");
      }
    } else {
      while (pos < n && !is_space(dsn[pos])) {
        char c = dsn[pos++];
        if (c == '\\') {
          if (pos < n) value.push_back(dsn[pos++]);
        } else {
          value.push_back(c);
        }
      }
    }
    assign(info, keyword, std::move(value));
  }
  return info;
}

}  // namespace sw::config
