// Internals shared by the SCRAM files: HMAC/SHA-256 primitives, the SaltedPassword cache and
// the attribute reader for "a=value,b=value" messages. Not part of the module's interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace sw::auth::detail {

constexpr size_t kKeyLength = 32;  // SHA-256 output; every SCRAM key, proof and signature

std::string hmac_sha256(std::string_view key, std::string_view data);
std::string sha256(std::string_view data);
// a XOR b; both must have the same length.
std::string xor_bytes(std::string_view a, std::string_view b);
// Overwrites then clears a string that held key material.
void wipe(std::string& s);

// Hi(password, salt, i) of RFC 5802: PBKDF2-HMAC-SHA256, applied to the SASLprep'ed password.
// iterations must be >= 1.
std::string salted_password(std::string_view password, std::string_view salt, uint32_t iterations);
// salted_password() through a small process-wide cache (thread-safe, bounded, least recently
// used evicted). Entries are keyed by an HMAC under a per-process random key, not the password.
std::string cached_salted_password(std::string_view password, std::string_view salt, uint32_t iterations);

// RFC 5802 "printable": %x21-2B / %x2D-7E (printable ASCII except ','), at least one character.
bool is_printable_nonce(std::string_view s);
// RFC 5802 posit-number: [1-9][0-9]*. Returns nullopt if malformed, `limit + 1` if it is larger
// than `limit` (never overflows).
std::optional<uint64_t> parse_posit_number(std::string_view s, uint64_t limit);

// Sequential reader of "attr=value" pairs separated by single commas. Values run to the next ','
// (which is consumed) or the end. A trailing comma makes the next read fail.
class AttributeReader {
 public:
  explicit AttributeReader(std::string_view message) : message_(message) {}
  // Reads the next attribute if its name is `name`; nullopt (nothing consumed) otherwise.
  std::optional<std::string_view> expect(char name);
  // Reads the next attribute, whatever its (ALPHA) name.
  std::optional<std::pair<char, std::string_view>> next();
  bool at_end() const { return pos_ == message_.size() && !dangling_comma_; }
  size_t position() const { return pos_; }

 private:
  std::string_view message_;
  size_t pos_ = 0;
  bool dangling_comma_ = false;
};

}  // namespace sw::auth::detail
