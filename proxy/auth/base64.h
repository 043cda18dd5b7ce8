// Strict base64 (RFC 4648 standard alphabet, '=' padding) for SCRAM attributes and secrets.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sw::auth {

// Padded base64 of `data`.
std::string base64_encode(std::string_view data);

// Decodes canonical base64 only: length a multiple of 4, '=' only as final padding, no
// whitespace, unused trailing bits zero. Anything else yields nullopt. "" decodes to "".
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace sw::auth
