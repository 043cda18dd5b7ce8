#include "session/client_auth.h"

#include <doctest/doctest.h>

#include <memory>

#include "auth/md5.h"

using sw::session::ClientAuth;

namespace {

// The salt of an AuthenticationMD5Password message: 'R', length 12, code 5, 4 bytes of salt.
std::string salt_of(const std::string& request) {
  REQUIRE(request.size() == 13);
  REQUIRE(request[0] == 'R');
  return request.substr(9, 4);
}

std::string password_message(const std::string& password) { return password + std::string(1, '\0'); }

}  // namespace

TEST_CASE("md5: the right response logs in, a wrong one gets 28P01") {
  sw::config::User user{"alice", "secret"};
  ClientAuth good(sw::config::AuthMethod::Md5, &user, "alice");
  std::string salt = salt_of(good.begin());
  std::string out;
  auto ok =
      good.on_message(password_message(sw::auth::md5_password_response("alice", "secret", salt.data())), out);
  REQUIRE(ok);
  CHECK(*ok);

  ClientAuth bad(sw::config::AuthMethod::Md5, &user, "alice");
  salt = salt_of(bad.begin());
  auto refused =
      bad.on_message(password_message(sw::auth::md5_password_response("alice", "nope", salt.data())), out);
  REQUIRE_FALSE(refused);
  CHECK(refused.status().sqlstate == "28P01");
}

// A reload replaces the config, freeing its users, while a login may be under way: the exchange
// must not depend on the entry it started with staying alive (ASan runs this in scripts/test.sh).
TEST_CASE("the login outlives the config entry it started with") {
  auto user = std::make_unique<sw::config::User>(sw::config::User{"alice", "secret"});
  ClientAuth auth(sw::config::AuthMethod::Md5, user.get(), "alice");
  std::string salt = salt_of(auth.begin());
  user.reset();
  std::string out;
  auto ok =
      auth.on_message(password_message(sw::auth::md5_password_response("alice", "secret", salt.data())), out);
  REQUIRE(ok);
  CHECK(*ok);
}
