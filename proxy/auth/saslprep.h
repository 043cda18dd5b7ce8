// SASLprep (RFC 4013) of a SCRAM password, with PostgreSQL's fallback: a password that is not
// valid UTF-8, or that SASLprep prohibits, is used as raw bytes (pg_saslprep + its callers).
#pragma once

#include <string>
#include <string_view>

namespace sw::auth {

// Returns the bytes that go into PBKDF2 for `password`.
//
// Exact for: pure ASCII (identity, as in PostgreSQL — even control characters), invalid UTF-8
// (raw), and non-ASCII UTF-8: mapping of RFC 3454 B.1 to nothing and C.1.2 to U+0020, NFKC
// normalization (nfkc.h), and the prohibited-output tables C.2-C.9 on the mapped string (the
// raw password when one matches or the mapping left nothing), exactly as PostgreSQL does.
//
// Not implemented, so the result can differ from PostgreSQL's for such passwords: the A.1
// unassigned-code-point check and the RFC 3454 section 6 bidi rule (PostgreSQL falls back to
// the raw password there; a password with a code point unassigned in Unicode 3.2, or mixing
// right-to-left and left-to-right letters, is normalized here).
std::string saslprep_password(std::string_view password);

}  // namespace sw::auth
