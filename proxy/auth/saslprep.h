// SASLprep (RFC 4013) of a SCRAM password, with PostgreSQL's fallback: a password that is not
// valid UTF-8, or that SASLprep prohibits, is used as raw bytes (pg_saslprep + its callers).
#pragma once

#include <string>
#include <string_view>

namespace sw::auth {

// Returns the bytes that go into PBKDF2 for `password`.
//
// Exact for: pure ASCII (identity, as in PostgreSQL — even control characters), invalid UTF-8
// (raw), and non-ASCII UTF-8 whose characters are already in NFKC form (mapping of RFC 3454
// B.1 to nothing and C.1.2 to U+0020, empty-after-mapping and prohibited-output tables C.2-C.9
// give the raw password, exactly as PostgreSQL does).
//
// Not implemented, so the result can differ from PostgreSQL's for such passwords:
//  * NFKC normalization (compatibility characters such as full-width letters, ligatures,
//    superscripts, or decomposed accents are left as they are);
//  * the A.1 unassigned-code-point check and the RFC 3454 section 6 bidi rule (PostgreSQL
//    falls back to the raw password there; this only matters if the password also contains
//    a B.1/C.1.2 character that the mapping step changed).
std::string saslprep_password(std::string_view password);

}  // namespace sw::auth
