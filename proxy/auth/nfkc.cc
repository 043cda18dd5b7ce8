// NFKC normalization (see nfkc.h): decompose, reorder, recompose, as UAX #15 section 3 and
// PostgreSQL's unicode_normalize (docs/architecture.md §4.2).
#include "auth/nfkc.h"

#include <algorithm>

#include "auth/nfkc_tables.h"

namespace sw::auth {
namespace {

using nfkc_data::CombiningRun;
using nfkc_data::Composition;
using nfkc_data::Decomposition;

// Hangul syllables (Unicode 3.12, "Conjoining Jamo Behavior").
constexpr uint32_t kSBase = 0xAC00;
constexpr uint32_t kLBase = 0x1100;
constexpr uint32_t kVBase = 0x1161;
constexpr uint32_t kTBase = 0x11A7;
constexpr uint32_t kLCount = 19;
constexpr uint32_t kVCount = 21;
constexpr uint32_t kTCount = 28;
constexpr uint32_t kNCount = kVCount * kTCount;
constexpr uint32_t kSCount = kLCount * kNCount;

uint8_t combining_class(uint32_t cp) {
  const auto* end = std::end(nfkc_data::kCombiningRuns);
  // The last run starting at or before `cp`.
  const auto* run = std::upper_bound(std::begin(nfkc_data::kCombiningRuns), end, cp,
                                     [](uint32_t c, const CombiningRun& r) { return c < r.first; });
  if (run == std::begin(nfkc_data::kCombiningRuns)) return 0;
  --run;
  return cp - run->first < run->count ? run->ccc : 0;
}

void append_decomposition(uint32_t cp, std::vector<uint32_t>& out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    const uint32_t s = cp - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount != 0) out.push_back(kTBase + s % kTCount);
    return;
  }
  const auto* end = std::end(nfkc_data::kDecompositions);
  const auto* found = std::lower_bound(std::begin(nfkc_data::kDecompositions), end, cp,
                                       [](const Decomposition& d, uint32_t c) { return d.code < c; });
  if (found == end || found->code != cp) {
    out.push_back(cp);
    return;
  }
  const uint32_t* first = nfkc_data::kDecompositionPool + found->offset;
  out.insert(out.end(), first, first + found->length);
}

// Canonical ordering: a stable sort of every run of non-starters by combining class (the
// exchange of adjacent pairs of UAX #15, as a stable sort per run).
void reorder(std::vector<uint32_t>& s) {
  size_t i = 0;
  while (i < s.size()) {
    if (combining_class(s[i]) == 0) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < s.size() && combining_class(s[end]) != 0) ++end;
    std::stable_sort(s.begin() + static_cast<std::ptrdiff_t>(i), s.begin() + static_cast<std::ptrdiff_t>(end),
                     [](uint32_t a, uint32_t b) { return combining_class(a) < combining_class(b); });
    i = end;
  }
}

// The primary composite of `first` followed by `second`, or 0.
uint32_t compose(uint32_t first, uint32_t second) {
  if (first >= kLBase && first < kLBase + kLCount && second >= kVBase && second < kVBase + kVCount) {
    return kSBase + ((first - kLBase) * kVCount + (second - kVBase)) * kTCount;
  }
  if (first >= kSBase && first < kSBase + kSCount && (first - kSBase) % kTCount == 0 && second > kTBase &&
      second < kTBase + kTCount) {
    return first + (second - kTBase);
  }
  const auto* end = std::end(nfkc_data::kCompositions);
  const auto* found =
      std::lower_bound(std::begin(nfkc_data::kCompositions), end, Composition{first, second, 0},
                       [](const Composition& a, const Composition& b) {
                         return a.first != b.first ? a.first < b.first : a.second < b.second;
                       });
  return found != end && found->first == first && found->second == second ? found->composite : 0;
}

// Canonical composition (UAX #15 section 3, D117): each character combines with the last starter
// unless blocked by a character in between of class 0 or of a class not below its own.
void recompose(std::vector<uint32_t>& s) {
  if (s.empty()) return;
  size_t starter = 0;
  size_t kept = 1;
  int last_class = -1;  // of the last character kept after the starter; -1: none
  for (size_t i = 1; i < s.size(); ++i) {
    const uint32_t cp = s[i];
    const int ccc = combining_class(cp);
    const uint32_t composite = last_class < ccc ? compose(s[starter], cp) : 0;
    if (composite != 0) {
      s[starter] = composite;
      continue;
    }
    if (ccc == 0) {
      starter = kept;
      last_class = -1;
    } else {
      last_class = ccc;
    }
    s[kept++] = cp;
  }
  s.resize(kept);
}

}  // namespace

std::vector<uint32_t> nfkc(const std::vector<uint32_t>& input) {
  std::vector<uint32_t> out;
  out.reserve(input.size());
  for (uint32_t cp : input) append_decomposition(cp, out);
  reorder(out);
  recompose(out);
  return out;
}

}  // namespace sw::auth
