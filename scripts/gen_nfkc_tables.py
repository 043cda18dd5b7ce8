#!/usr/bin/env python3
"""Writes auth/nfkc_tables.h, the Unicode data of NFKC normalization (proxy/auth/nfkc.cc). The build
runs it (proxy/auth/CMakeLists.txt) into the build directory; the header is not in the repository.

    scripts/gen_nfkc_tables.py [UCD_DIR [OUTPUT]]     (OUTPUT: default standard output)

UCD_DIR (default /usr/share/unicode, Debian's package unicode-data) holds UnicodeData.txt and
DerivedNormalizationProps.txt of one Unicode version. Three tables, each sorted for binary search:
  * the canonical combining class of every code point whose class is not 0, as runs;
  * the full compatibility decomposition (NFKD, applied recursively here) of every code point
    that has one, Hangul syllables excepted (nfkc.cc decomposes them arithmetically);
  * the primary composites: canonical decompositions of two code points whose result is not
    Full_Composition_Exclusion, by (first, second).
"""
import os
import re
import sys

HANGUL_FIRST, HANGUL_LAST = 0xAC00, 0xD7A3


def read_unicode_data(path):
    combining, decomposition = {}, {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.split(";")
            code = int(fields[0], 16)
            if int(fields[3]) != 0:
                combining[code] = int(fields[3])
            mapping = fields[5].split()
            if not mapping:
                continue
            compat = mapping[0].startswith("<")
            if compat:
                mapping = mapping[1:]
            decomposition[code] = (compat, [int(c, 16) for c in mapping])
    return combining, decomposition


def read_full_composition_exclusion(path):
    excluded = set()
    pattern = re.compile(r"^([0-9A-F]+)(?:\.\.([0-9A-F]+))?\s*;\s*Full_Composition_Exclusion\b")
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = pattern.match(line)
            if m:
                first = int(m.group(1), 16)
                last = int(m.group(2) or m.group(1), 16)
                excluded.update(range(first, last + 1))
    return excluded


def unicode_version(path):
    with open(path, encoding="utf-8") as f:
        m = re.match(r"# DerivedNormalizationProps-([0-9.]+)\.txt", f.readline())
    return m.group(1) if m else "unknown"


def full_decomposition(code, decomposition):
    if code not in decomposition:
        return [code]
    out = []
    for c in decomposition[code][1]:
        out.extend(full_decomposition(c, decomposition))
    return out


def combining_runs(combining):
    runs = []  # [first, count, class]
    for code in sorted(combining):
        cls = combining[code]
        if runs and runs[-1][0] + runs[-1][1] == code and runs[-1][2] == cls and runs[-1][1] < 255:
            runs[-1][1] += 1
        else:
            runs.append([code, 1, cls])
    return runs


def rows(items, per_line):
    lines = []
    for i in range(0, len(items), per_line):
        lines.append("    " + " ".join(items[i : i + per_line]))
    return "\n".join(lines)


def main():
    ucd = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/unicode"
    combining, decomposition = read_unicode_data(os.path.join(ucd, "UnicodeData.txt"))
    props = os.path.join(ucd, "DerivedNormalizationProps.txt")
    excluded = read_full_composition_exclusion(props)
    version = unicode_version(props)

    runs = combining_runs(combining)
    pool, entries = [], []
    for code in sorted(decomposition):
        if HANGUL_FIRST <= code <= HANGUL_LAST:
            continue
        full = full_decomposition(code, decomposition)
        entries.append((code, len(pool), len(full)))
        pool.extend(full)
    compositions = sorted(
        (mapping[0], mapping[1], code)
        for code, (compat, mapping) in decomposition.items()
        if not compat and len(mapping) == 2 and code not in excluded
    )
    assert len(pool) < 1 << 16 and max(n for _, _, n in entries) < 256

    text = header_text(version, runs, entries, pool, compositions)
    if len(sys.argv) > 2:
        # Written whole or not at all: a build stopped halfway leaves no half-written header.
        partial = sys.argv[2] + ".partial"
        with open(partial, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(partial, sys.argv[2])
    else:
        sys.stdout.write(text)
    print(
        f"{len(runs)} combining runs, {len(entries)} decompositions ({len(pool)} code points), "
        f"{len(compositions)} compositions",
        file=sys.stderr,
    )


def header_text(version, runs, entries, pool, compositions):
    return (
        f"""// Unicode {version} data of NFKC normalization, for nfkc.cc only. GENERATED at build time
// (proxy/auth/CMakeLists.txt runs scripts/gen_nfkc_tables.py) from UnicodeData.txt and
// DerivedNormalizationProps.txt of Debian's package unicode-data. Every table is sorted by code
// point for binary search.
#pragma once

#include <cstdint>

namespace sw::auth::nfkc_data {{

// `count` consecutive code points from `first` whose canonical combining class is `ccc` (not 0).
struct CombiningRun {{
  uint32_t first;
  uint8_t count;
  uint8_t ccc;
}};

// The full compatibility decomposition of `code`: kDecompositionPool[offset, offset + length).
struct Decomposition {{
  uint32_t code;
  uint16_t offset;
  uint8_t length;
}};

// `first` followed by `second` composes canonically to `composite` (a primary composite).
struct Composition {{
  uint32_t first;
  uint32_t second;
  uint32_t composite;
}};

// clang-format off
inline constexpr CombiningRun kCombiningRuns[] = {{
{rows([f"{{0x{f:X},{n},{c}}}," for f, n, c in runs], 8)}
}};

inline constexpr Decomposition kDecompositions[] = {{
{rows([f"{{0x{c:X},{o},{n}}}," for c, o, n in entries], 8)}
}};

inline constexpr uint32_t kDecompositionPool[] = {{
{rows([f"0x{c:X}," for c in pool], 12)}
}};

inline constexpr Composition kCompositions[] = {{
{rows([f"{{0x{a:X},0x{b:X},0x{c:X}}}," for a, b, c in compositions], 5)}
}};
// clang-format on

}}  // namespace sw::auth::nfkc_data
"""
    )


if __name__ == "__main__":
    main()
