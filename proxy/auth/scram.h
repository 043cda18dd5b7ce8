// SCRAM-SHA-256 (RFC 5802 / RFC 7677) as PostgreSQL speaks it, both sides. Pure state machines:
// messages in, messages out; the caller moves them over the wire. No I/O, no logging of any
// SCRAM material.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sw::auth {

// The verifier PostgreSQL stores: iterations, salt and the two derived keys (raw bytes).
struct ScramSecret {
  uint32_t iterations = 4096;
  std::string salt;
  std::string stored_key;
  std::string server_key;
};

// Derives a secret from a cleartext password (SASLprep is applied where the password is valid
// UTF-8 needing no normalization; otherwise the raw bytes are used, as PostgreSQL does).
ScramSecret make_scram_secret(std::string_view password, std::string_view salt, uint32_t iterations);
// Parses "SCRAM-SHA-256$<iter>:<salt b64>$<StoredKey b64>:<ServerKey b64>".
Result<ScramSecret> parse_scram_secret(std::string_view text);

// The proxy authenticating a client. A null secret (unknown user) runs a mock exchange with a
// deterministic fake salt and always fails at the final step, so the outcome is indistinguishable.
class ScramServer {
 public:
  ScramServer(const ScramSecret* secret, std::string_view fake_salt_seed, std::string server_nonce);
  // client-first-message -> server-first-message. Errors: malformed message (08P01) or channel
  // binding requested (28000).
  Result<std::string> on_client_first(std::string_view message);
  // client-final-message -> server-final-message ("v=..."). Wrong proof: 28P01.
  Result<std::string> on_client_final(std::string_view message);

 private:
  ScramSecret secret_;
  bool mock_;
  std::string server_nonce_;
  std::string client_first_bare_;
  std::string server_first_;
  std::string combined_nonce_;
  enum class Step : uint8_t { kStart, kFirstDone, kDone, kFailed };
  Step step_ = Step::kStart;
  char cbind_flag_ = 'n';  // gs2 channel-binding flag of client-first: 'n' or 'y'
};

// The proxy logging in to a backend. Refuses iteration counts above kMaxIterations and server
// nonces that do not extend the client nonce or exceed kMaxNonceLength.
class ScramClient {
 public:
  static constexpr uint32_t kMaxIterations = 100000;
  static constexpr size_t kMaxNonceLength = 1024;

  ScramClient(std::string password, std::string client_nonce);
  std::string client_first();                                     // "n,,n=,r=<nonce>"
  Result<std::string> on_server_first(std::string_view message);  // -> client-final
  Status on_server_final(std::string_view message);               // verifies server signature

 private:
  std::string password_;
  std::string client_nonce_;
  std::string client_first_bare_;
  std::string auth_message_;
  std::string server_key_;
  enum class Step : uint8_t { kStart, kFirstDone, kDone, kFailed };
  Step step_ = Step::kStart;
};

// Random nonce of printable characters (OpenSSL RAND_bytes, base64 without '=').
std::string random_nonce(size_t bytes = 18);
void random_bytes(void* out, size_t n);

}  // namespace sw::auth
