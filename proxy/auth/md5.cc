#include "auth/md5.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

namespace sw::auth {
namespace {

// Wipes a temporary that held password-derived material.
void wipe(std::string& s) {
  if (!s.empty()) OPENSSL_cleanse(s.data(), s.size());
  s.clear();
}

}  // namespace

// Lowercase hex of MD5(data); "" if the digest is unavailable (e.g. a FIPS-only provider), which
// then never matches a stored hash.
std::string md5_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &length, EVP_md5(), nullptr) != 1) return {};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(size_t{length} * 2);
  for (unsigned int i = 0; i < length; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 15]);
  }
  OPENSSL_cleanse(digest, sizeof digest);
  return out;
}

std::string md5_password_response(std::string_view user, std::string_view password, const char salt[4]) {
  std::string input;
  input.reserve(password.size() + user.size());
  input.append(password).append(user);
  std::string inner = md5_hex(input);  // what PostgreSQL stores, without its "md5" prefix
  wipe(input);
  inner.append(salt, 4);
  std::string response = "md5" + md5_hex(inner);
  wipe(inner);
  return response;
}

// Lengths are public (digests and proofs have fixed sizes), so a length mismatch returns at once;
// equal-length contents are compared without a data-dependent exit.
bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  if (a.empty()) return true;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace sw::auth
