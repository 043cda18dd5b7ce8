// PostgreSQL's md5 password scheme: "md5" + hex(md5(hex(md5(password + user)) + salt)).
#pragma once

#include <string>
#include <string_view>

namespace sw::auth {

std::string md5_hex(std::string_view data);
// The response a client sends to AuthenticationMD5Password.
std::string md5_password_response(std::string_view user, std::string_view password, const char salt[4]);
// Constant-time equality for secrets and proofs.
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace sw::auth
