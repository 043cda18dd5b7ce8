#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "config/config.h"

using sw::config::ConnInfo;
using sw::config::parse_conninfo;

namespace {

// The message of the invalid_argument parse_conninfo throws for `dsn`.
std::string error_of(const std::string& dsn) {
  try {
    parse_conninfo(dsn);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  FAIL("parsed without error: " << dsn);
  return {};
}

}  // namespace

TEST_CASE("known keywords get typed fields, defaults stay otherwise") {
  ConnInfo c = parse_conninfo(
      "host=db.example port=5433 dbname=app user=alice password=s3cret sslmode=verify-full "
      "sslrootcert=/etc/ca.pem");
  CHECK(c.host == "db.example");
  CHECK(c.port == 5433);
  CHECK(c.dbname == "app");
  CHECK(c.user == "alice");
  CHECK(c.password == "s3cret");
  CHECK(c.sslmode == "verify-full");
  CHECK(c.sslrootcert == "/etc/ca.pem");
  CHECK(c.other.empty());

  ConnInfo d = parse_conninfo("");
  CHECK(d.host == "127.0.0.1");
  CHECK(d.port == 5432);
  CHECK(d.sslmode == "disable");
  CHECK(d.dbname.empty());
}

TEST_CASE("quoting, escapes and whitespace follow libpq") {
  ConnInfo c = parse_conninfo("  user = 'bob smith'\tpassword='it\\'s \\\\ here' dbname=a\\ b  ");
  CHECK(c.user == "bob smith");
  CHECK(c.password == "it's \\ here");
  CHECK(c.dbname == "a b");

  CHECK(parse_conninfo("password=''").password.empty());
  CHECK(parse_conninfo("password='' user=x").user == "x");
  CHECK(parse_conninfo("password=a=b").password == "a=b");
  CHECK(parse_conninfo("password='a b' port=6000").port == 6000);
  // A later duplicate wins, as in libpq.
  CHECK(parse_conninfo("port=1 port=2").port == 2);
  // libpq: after '=', whitespace is skipped, so the next word becomes the value.
  CHECK(parse_conninfo("dbname= app").dbname == "app");
  // Empty host/port/sslmode keep the defaults.
  ConnInfo e = parse_conninfo("host='' port='' sslmode=''");
  CHECK(e.host == "127.0.0.1");
  CHECK(e.port == 5432);
  CHECK(e.sslmode == "disable");
}

TEST_CASE("other libpq keywords are kept verbatim") {
  ConnInfo c = parse_conninfo(
      "host=a application_name='shard wire' connect_timeout=5 options='-c search_path=x' "
      "target_session_attrs=read-write replication=database");
  CHECK(c.other.size() == 5);
  CHECK(c.other.at("application_name") == "shard wire");
  CHECK(c.other.at("connect_timeout") == "5");
  CHECK(c.other.at("options") == "-c search_path=x");
  CHECK(c.other.at("target_session_attrs") == "read-write");
  CHECK(c.other.at("replication") == "database");
}

TEST_CASE("every libpq sslmode is accepted") {
  for (const char* mode : {"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}) {
    CHECK(parse_conninfo(std::string("sslmode=") + mode).sslmode == mode);
  }
}

TEST_CASE("errors name the keyword and never the value") {
  CHECK(error_of("port=0") == "port must be an integer 1..65535");
  CHECK(error_of("port=65536") == "port must be an integer 1..65535");
  CHECK(error_of("port=54x") == "port must be an integer 1..65535");
  CHECK(error_of("port=5432,5433") == "port must be an integer 1..65535");
  CHECK(error_of("port=-1") == "port must be an integer 1..65535");
  CHECK(error_of("sslmode=maybe").find("sslmode must be one of disable, allow") == 0);
  CHECK(error_of("host=a,b") == "host: multiple hosts are not supported");
  CHECK(error_of("dbnmae=x") == "unknown keyword \"dbnmae\" (did you mean \"dbname\"?)");
  CHECK(error_of("frobnicate=x") == "unknown keyword \"frobnicate\"");
  CHECK(error_of("=x") == "missing keyword before \"=\" at offset 0");
  CHECK(error_of("password='unterminated") == "unterminated quoted value for keyword \"password\"");

  // A space in an unquoted password splits it; the stray half must not be echoed.
  std::string message = error_of("user=a password=top secret");
  CHECK(message == "missing \"=\" after a keyword at offset 20");
  CHECK(message.find("secret") == std::string::npos);
  CHECK(error_of("postgresql://u:pw@h/db").find("URI") != std::string::npos);
}
