// SCRAM key derivation and secrets: the HMAC/SHA-256 primitives, PBKDF2 with its process-wide
// cache, make_scram_secret/parse_scram_secret and the random nonce source.
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <list>
#include <mutex>

#include "auth/base64.h"
#include "auth/md5.h"
#include "auth/saslprep.h"
#include "auth/scram.h"
#include "auth/scram_internal.h"
#include "common/bytes.h"

namespace sw::auth {
namespace detail {

std::string hmac_sha256(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (key.size() > INT_MAX ||
      HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &length) == nullptr) {
    return {};  // an empty key never verifies
  }
  std::string result(reinterpret_cast<char*>(out), length);
  OPENSSL_cleanse(out, sizeof out);
  return result;
}

std::string sha256(std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), out, &length, EVP_sha256(), nullptr) != 1) return {};
  std::string result(reinterpret_cast<char*>(out), length);
  OPENSSL_cleanse(out, sizeof out);
  return result;
}

std::string xor_bytes(std::string_view a, std::string_view b) {
  std::string out(std::min(a.size(), b.size()), '\0');
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<char>(a[i] ^ b[i]);
  return out;
}

void wipe(std::string& s) {
  if (!s.empty()) OPENSSL_cleanse(s.data(), s.size());
  s.clear();
}

std::string salted_password(std::string_view password, std::string_view salt, uint32_t iterations) {
  std::string prepared = saslprep_password(password);
  std::string out(kKeyLength, '\0');
  bool ok =
      prepared.size() <= INT_MAX && salt.size() <= INT_MAX && iterations >= 1 && iterations <= INT_MAX &&
      PKCS5_PBKDF2_HMAC(prepared.data(), static_cast<int>(prepared.size()),
                        reinterpret_cast<const unsigned char*>(salt.data()), static_cast<int>(salt.size()),
                        static_cast<int>(iterations), EVP_sha256(), static_cast<int>(out.size()),
                        reinterpret_cast<unsigned char*>(out.data())) == 1;
  wipe(prepared);
  if (!ok) out.clear();  // derived keys then never verify
  return out;
}

namespace {

class SaltedPasswordCache {
 public:
  static constexpr size_t kCapacity = 64;

  SaltedPasswordCache() : key_(32, '\0') { random_bytes(key_.data(), key_.size()); }
  ~SaltedPasswordCache() {
    for (Entry& e : entries_) wipe(e.value);
    wipe(key_);
  }

  std::string get(std::string_view password, std::string_view salt, uint32_t iterations) {
    std::string id = entry_id(password, salt, iterations);
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if (constant_time_equal(it->id, id)) {
          entries_.splice(entries_.begin(), entries_, it);  // most recently used first
          return it->value;
        }
      }
    }
    // Derive outside the lock: PBKDF2 is the slow part. Concurrent misses may both derive.
    std::string value = salted_password(password, salt, iterations);
    if (value.empty()) return value;
    std::lock_guard<std::mutex> lock(mu_);
    for (const Entry& e : entries_) {
      if (constant_time_equal(e.id, id)) return value;
    }
    entries_.push_front(Entry{std::move(id), value});
    if (entries_.size() > kCapacity) {
      wipe(entries_.back().value);
      entries_.pop_back();
    }
    return value;
  }

 private:
  struct Entry {
    std::string id;
    std::string value;
  };

  // Unambiguous encoding of (password, salt, iterations) under the per-process key.
  std::string entry_id(std::string_view password, std::string_view salt, uint32_t iterations) const {
    std::string input;
    input.reserve(password.size() + salt.size() + 12);
    append_be32(input, static_cast<uint32_t>(password.size()));
    input.append(password);
    append_be32(input, static_cast<uint32_t>(salt.size()));
    input.append(salt);
    append_be32(input, iterations);
    std::string id = hmac_sha256(key_, input);
    wipe(input);
    return id;
  }

  std::mutex mu_;
  std::string key_;
  std::list<Entry> entries_;
};

}  // namespace

std::string cached_salted_password(std::string_view password, std::string_view salt, uint32_t iterations) {
  static SaltedPasswordCache cache;
  return cache.get(password, salt, iterations);
}

}  // namespace detail

// An iteration count of 0 is treated as 1; counts above INT_MAX (outside PostgreSQL's range)
// give empty keys, which never verify.
ScramSecret make_scram_secret(std::string_view password, std::string_view salt, uint32_t iterations) {
  ScramSecret secret;
  secret.iterations = std::max<uint32_t>(iterations, 1);
  secret.salt = std::string(salt);
  std::string salted = detail::salted_password(password, salt, secret.iterations);
  std::string client_key = detail::hmac_sha256(salted, "Client Key");
  secret.stored_key = detail::sha256(client_key);
  secret.server_key = detail::hmac_sha256(salted, "Server Key");
  detail::wipe(client_key);
  detail::wipe(salted);
  return secret;
}

// Errors never quote the text: it is a password verifier.
Result<ScramSecret> parse_scram_secret(std::string_view text) {
  auto invalid = [](const char* why) {
    return Status::config(std::string("invalid SCRAM secret (expected "
                                      "SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>): ") +
                          why);
  };
  constexpr std::string_view kPrefix = "SCRAM-SHA-256$";
  if (text.substr(0, kPrefix.size()) != kPrefix) return invalid("missing SCRAM-SHA-256$ prefix");
  text.remove_prefix(kPrefix.size());
  size_t dollar = text.find('$');
  if (dollar == std::string_view::npos || text.find('$', dollar + 1) != std::string_view::npos) {
    return invalid("expected exactly two '$' separators");
  }
  std::string_view params = text.substr(0, dollar);
  std::string_view keys = text.substr(dollar + 1);
  size_t colon1 = params.find(':');
  size_t colon2 = keys.find(':');
  if (colon1 == std::string_view::npos || colon2 == std::string_view::npos) {
    return invalid("missing ':' separator");
  }
  auto iterations = detail::parse_posit_number(params.substr(0, colon1), INT_MAX);
  if (!iterations || *iterations > INT_MAX) return invalid("iteration count is not a positive integer");
  auto salt = base64_decode(params.substr(colon1 + 1));
  if (!salt || salt->empty()) return invalid("salt is not valid base64");
  auto stored_key = base64_decode(keys.substr(0, colon2));
  auto server_key = base64_decode(keys.substr(colon2 + 1));
  if (!stored_key || stored_key->size() != detail::kKeyLength || !server_key ||
      server_key->size() != detail::kKeyLength) {
    return invalid("StoredKey and ServerKey must be base64 of 32 bytes");
  }
  ScramSecret secret;
  secret.iterations = static_cast<uint32_t>(*iterations);
  secret.salt = std::move(*salt);
  secret.stored_key = std::move(*stored_key);
  secret.server_key = std::move(*server_key);
  return secret;
}

// A failing CSPRNG leaves no safe way to continue (nonces and salts would be predictable), so
// this aborts the process rather than returning weak bytes.
void random_bytes(void* out, size_t n) {
  auto* p = static_cast<unsigned char*>(out);
  while (n > 0) {
    int chunk = static_cast<int>(std::min<size_t>(n, 1 << 20));
    if (RAND_bytes(p, chunk) != 1) std::abort();
    p += chunk;
    n -= static_cast<size_t>(chunk);
  }
}

std::string random_nonce(size_t bytes) {
  std::string raw(bytes, '\0');
  random_bytes(raw.data(), raw.size());
  std::string nonce = base64_encode(raw);
  while (!nonce.empty() && nonce.back() == '=') nonce.pop_back();
  return nonce;
}

}  // namespace sw::auth
