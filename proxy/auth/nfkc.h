// Unicode normalization form KC (UAX #15), the normalization step of SASLprep (RFC 4013 2.2), as
// PostgreSQL's unicode_normalize(UNICODE_NFKC, ...) does it: full compatibility decomposition
// (Hangul syllables arithmetically), canonical ordering of combining marks, then canonical
// composition of the primary composites. The data is Unicode's, generated into nfkc_tables.h.
#pragma once

#include <cstdint>
#include <vector>

namespace sw::auth {

// NFKC of `input`, a sequence of Unicode scalar values. Code points the data does not know
// (unassigned ones) are kept as they are, with combining class 0.
std::vector<uint32_t> nfkc(const std::vector<uint32_t>& input);

}  // namespace sw::auth
