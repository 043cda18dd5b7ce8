// Shared fixtures for the SCRAM tests: the RFC 7677 exchange and an independent reference
// implementation built on OpenSSL directly (not on the module's helpers).
#pragma once

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <string>
#include <string_view>

#include "auth/base64.h"
#include "auth/scram.h"

namespace scram_test {

// RFC 7677 section 3 (user "user", password "pencil").
inline const std::string kClientNonce = "rOprNGfwEbeRWgbNEkqO";
inline const std::string kServerNonce = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
inline const std::string kSaltB64 = "W22ZaJ0SNY7soEsUEjb6gQ==";
inline const std::string kClientFirst = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
inline const std::string kServerFirst =
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
inline const std::string kClientFinal =
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
    "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
inline const std::string kServerFinal = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";

inline sw::auth::ScramSecret rfc_secret() {
  return sw::auth::make_scram_secret("pencil", *sw::auth::base64_decode(kSaltB64), 4096);
}

inline std::string ref_hmac(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &length);
  return std::string(reinterpret_cast<char*>(out), length);
}

inline std::string ref_sha256(std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), out, &length, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<char*>(out), length);
}

inline std::string ref_salted_password(std::string_view password, std::string_view salt, int iterations) {
  unsigned char out[32];
  PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                    reinterpret_cast<const unsigned char*>(salt.data()), static_cast<int>(salt.size()),
                    iterations, EVP_sha256(), sizeof out, out);
  return std::string(reinterpret_cast<char*>(out), sizeof out);
}

inline std::string ref_xor(std::string_view a, std::string_view b) {
  std::string out(a);
  for (size_t i = 0; i < out.size() && i < b.size(); ++i) out[i] = static_cast<char>(out[i] ^ b[i]);
  return out;
}

// Runs a whole exchange; returns the first error, or ok when both sides accepted.
inline sw::Status run_exchange(sw::auth::ScramClient& client, sw::auth::ScramServer& server) {
  auto server_first = server.on_client_first(client.client_first());
  if (!server_first) return server_first.status();
  auto client_final = client.on_server_first(*server_first);
  if (!client_final) return client_final.status();
  auto server_final = server.on_client_final(*client_final);
  if (!server_final) return server_final.status();
  return client.on_server_final(*server_final);
}

}  // namespace scram_test
