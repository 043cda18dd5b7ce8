// ${NAME} in config values comes from the environment (secrets from a Kubernetes Secret, say).
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "config/config.h"

using namespace sw::config;

namespace {

const std::string kShards =
    "shards:\n"
    "  - { name: s0, dsn: \"host=db0 dbname=app user=app password=${SW_TEST_SHARD_PW}\" }\n";

// The error text of loading `yaml`, "" when it loads.
std::string load_error(const std::string& yaml) {
  try {
    load_string(yaml, "shardwire.yaml");
    return "";
  } catch (const ConfigError& e) {
    return e.what();
  }
}

}  // namespace

TEST_CASE("${NAME} in a value is replaced by the environment variable; $${ stays a literal ${") {
  setenv("SW_TEST_SHARD_PW", "s3cr$t{x}", 1);
  setenv("SW_TEST_APP_PW", "app-pw", 1);
  setenv("SW_TEST_EMPTY", "", 1);
  Config c = load_string(
      "auth:\n"
      "  method: scram-sha-256\n"
      "  users:\n"
      "    - { name: app, password: \"${SW_TEST_APP_PW}\" }\n"
      "    - { name: lit, password: \"a$${b}c$d\" }\n"
      "    - { name: empty, password: \"x${SW_TEST_EMPTY}y\" }\n"
      "mover: { user: mover, password: \"${SW_TEST_APP_PW}-${SW_TEST_APP_PW}\" }\n" +
          kShards,
      "shardwire.yaml");
  CHECK(c.auth.find("app")->password == "app-pw");
  CHECK(c.auth.find("lit")->password == "a${b}c$d");
  CHECK(c.auth.find("empty")->password == "xy");
  CHECK(c.mover.password == "app-pw-app-pw");
  CHECK(c.shards[0].conn.password == "s3cr$t{x}");
  CHECK(c.shards[0].conn.host == "db0");
  unsetenv("SW_TEST_SHARD_PW");
  unsetenv("SW_TEST_APP_PW");
  unsetenv("SW_TEST_EMPTY");
}

TEST_CASE("an unset variable or a malformed reference is an error naming file:line and key, never a value") {
  unsetenv("SW_TEST_SHARD_PW");
  const std::string users = "auth: { method: trust, users: [ { name: app } ] }\n";
  std::string error = load_error(users + kShards);
  CHECK(error ==
        "shardwire.yaml:3: shards[0].dsn: refers to ${SW_TEST_SHARD_PW}, which is not set in shardwire's "
        "environment");
  error = load_error(users + "shards: [ { name: s0, dsn: \"host=db0 password=${OOPS\" } ]\n");
  CHECK(error.rfind("shardwire.yaml:2: shards[0].dsn: has \"${\" without a closing \"}\"", 0) == 0);
  error = load_error(users + "shards: [ { name: s0, dsn: \"host=db0 password=${1-x}\" } ]\n");
  CHECK(error.find("${1-x}, which is not a variable name") != std::string::npos);
  setenv("SW_TEST_SHARD_PW", "hunter2-value", 1);
  error = load_error("auth: { method: md5, users: [ { name: app, password: \"${SW_TEST_NOPE}\" } ] }\n" +
                     kShards);
  CHECK(error.find("auth.users[0].password: refers to ${SW_TEST_NOPE}") != std::string::npos);
  CHECK(error.find("hunter2-value") == std::string::npos);
  unsetenv("SW_TEST_SHARD_PW");
}
