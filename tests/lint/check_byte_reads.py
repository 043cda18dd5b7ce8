#!/usr/bin/env python3
"""Finds raw byte reads and writes outside the modules that own a binary format.

The PostgreSQL v3 messages are wire/'s: a decoder or encoder of a message lives there (typed,
bounds-checked, fuzzed) and everyone else calls it. Outside the owners below, a line may not
  * load or store a big- or little-endian integer by hand (load_be32, store_be32, append_be16, ...);
  * put an integer together from bytes, or cut one into bytes, with shifts;
  * index a message body (body[0]) instead of decoding it;
  * include wire/byte_reader.h (a decoder built on it belongs in wire/), mover/ aside.
Owners (OWNERS, each with its reason) may. Exits 1 and prints one line per finding (file:line:
what), 0 when clean. Used by ctest (lint.byte_reads) and scripts/lint.sh;
lint.byte_reads_detects_violation runs it on tests/lint/fixture, which holds a session file with a
raw read, and expects the failure. docs/architecture.md §2 explains the rule.

Usage: check_byte_reads.py [--root DIR] [--count | --count-outside-codec]
  --count: print only the number of findings and exit 0;
  --count-outside-codec: the same with only wire/, auth/ and common/bytes.h as owners.
scripts/engine_counts.sh uses both.
"""
import argparse
import pathlib
import re
import sys

from check_includes import FOLDERS

# Paths (a folder ends with "/") that own a binary format, and why.
OWNERS = {
    "proxy/wire/": "the PostgreSQL v3 codec",
    "proxy/auth/": "SCRAM, md5, SASLprep and base64 byte strings",
    "proxy/common/bytes.h": "the big-endian helpers themselves",
    "proxy/merge/": "binary send/recv forms of column values and Bind parameters "
                    "(merge depends on common only)",
    "proxy/router/bucket_hash.cc": "PostgreSQL's hash_bytes over a key's bytes and the binary "
                                   "int/uuid key forms",
    "proxy/router/binary_array.cc": "the binary array form of a key-list parameter",
}

CODEC = ("proxy/wire/", "proxy/auth/", "proxy/common/bytes.h")

# (pattern, what it is). Matched on each line with its // comment removed.
RULES = [
    (re.compile(r"\b(load|store)_(be|le)(16|32|64)\s*\("), "a hand-made integer load/store"),
    (re.compile(r"\bappend_(be|le)(16|32|64)\s*\("), "a hand-made integer encoding"),
    (re.compile(r"(unsigned char|uint8_t|\])[^;]*<<\s*(8|16|24|32|40|48|56)\b"),
     "an integer put together from bytes with shifts"),
    (re.compile(r"\(\s*\w+\s*<<\s*8\s*\)\s*\|"), "an integer put together from bytes with shifts"),
    (re.compile(r"static_cast<(char|unsigned char|uint8_t)>\(\s*\(?\s*\w+\s*>>"),
     "an integer cut into bytes with shifts"),
    (re.compile(r"\bbody\s*\[\s*\d"), "a message body indexed instead of decoded"),
]
BYTE_READER = re.compile(r'^\s*#\s*include\s*"wire/byte_reader\.h"')
BYTE_READER_USERS = {"wire", "mover"}


def owner(relative, owners):
    return any(relative == path or (path.endswith("/") and relative.startswith(path)) for path in owners)


def check_file(path, module, relative):
    findings = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if BYTE_READER.match(line) and module not in BYTE_READER_USERS:
            findings.append(f"{relative}:{number}: wire::ByteReader outside wire/: decode the message "
                            "with a wire/ decoder")
            continue
        code = line.split("//", 1)[0]
        for pattern, what in RULES:
            if pattern.search(code):
                findings.append(f"{relative}:{number}: {what}: use a wire/ decoder or encoder "
                                f"({code.strip()})")
                break
    return findings


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default=pathlib.Path(__file__).resolve().parents[2])
    parser.add_argument("--count", action="store_true")
    parser.add_argument("--count-outside-codec", action="store_true")
    args = parser.parse_args()
    counting = args.count or args.count_outside_codec
    owners = CODEC if args.count_outside_codec else OWNERS
    root = pathlib.Path(args.root)
    findings, files = [], 0
    for module, folder in FOLDERS.items():
        for path in sorted((root / folder).glob("*")):
            if path.suffix not in (".h", ".cc"):
                continue
            relative = path.relative_to(root).as_posix()
            files += 1
            if owner(relative, owners):
                continue
            findings += check_file(path, module, relative)
    if counting:
        print(len(findings))
        return 0
    for finding in findings:
        print(finding)
    if files == 0:
        print(f"no sources under {root}")
        return 1
    print(f"check_byte_reads: {files} files, {len(findings)} raw byte reads or writes outside their owners")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
