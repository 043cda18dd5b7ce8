#!/usr/bin/env python3
"""Checks every #include of the project's modules against the allowed dependencies.

A module may include its own headers, the headers of the modules it may depend on (directly or
through them), and only the third-party headers it wraps. Exits 1 and prints one line per
violation (file:line: what and why), 0 when the tree is clean. Used by ctest (lint.includes);
lint.includes_detects_violation runs it on tests/lint/fixture, which holds an upward include,
and expects the failure. docs/architecture.md §2 explains the layering.

Usage: check_includes.py [--root DIR]
"""
import argparse
import pathlib
import re
import sys

# Where each module lives, relative to the root.
FOLDERS = {
    "common": "proxy/common", "stats": "proxy/stats", "metrics": "proxy/metrics",
    "wire": "proxy/wire", "auth": "proxy/auth", "net": "proxy/net", "config": "config",
    "parser": "parser", "merge": "proxy/merge", "router": "proxy/router", "sqltext": "proxy/sqltext",
    "twopc": "proxy/twopc", "catalog": "proxy/catalog",
    "mover": "proxy/mover", "pool": "proxy/pool", "session": "proxy/session",
    "admin": "proxy/admin", "app": "proxy/app",
}

# Direct dependencies; a module may also use what these depend on. Arrows point downwards only.
DEPENDS_ON = {
    "common": [],
    "stats": ["common"],
    "metrics": ["stats"],
    "wire": ["common"],
    "auth": ["common"],
    "net": ["common"],
    "config": ["common"],
    "parser": ["common"],
    "merge": ["common"],
    "router": ["parser", "config", "merge", "wire"],
    "sqltext": ["router", "wire", "config"],
    "twopc": ["stats"],
    "catalog": ["twopc", "sqltext", "router", "config"],
    "mover": ["catalog", "sqltext", "router", "wire", "config", "stats"],
    "pool": ["net", "wire", "auth", "stats"],
    "session": ["twopc", "pool", "router", "merge", "sqltext", "parser", "wire", "auth", "config", "stats", "net"],
    "admin": ["twopc", "router", "parser", "config", "stats", "wire", "catalog"],
    "app": ["admin", "metrics", "mover", "session", "catalog", "twopc", "router", "pool", "net", "config",
            "parser", "stats", "wire", "auth", "common"],
}

# Third-party headers (by prefix) and the only modules that may include them: each library is
# wrapped by one module (libuv: net, and app for its signal handling; OpenSSL: auth's hashes and
# net's TLS; libpq: the catalog and the mover, the only blocking-I/O modules).
THIRD_PARTY = {
    "libpq-fe.h": {"catalog", "mover"},
    "uv.h": {"net", "app"},
    "yaml-cpp/": {"config"},
    "pg_query.h": {"parser"},
    "prometheus/": {"metrics"},
    "openssl/": {"auth", "net"},
}

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def closure(module):
    seen, todo = set(), [module]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        todo.extend(DEPENDS_ON[current])
    return seen


def check_file(path, module, allowed, root):
    problems = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = INCLUDE.match(line)
        if not match:
            continue
        kind, header = match.groups()
        where = f"{path.relative_to(root)}:{number}"
        if kind == '"':
            target = header.split("/", 1)[0] if "/" in header else None
            if target is None:
                problems.append(f'{where}: "{header}" must be spelled "<module>/{header}"')
            elif target not in FOLDERS:
                problems.append(f'{where}: "{header}" names no module')
            elif target not in allowed:
                problems.append(f'{where}: {module} may not include "{header}" ({module} may use: '
                                f'{", ".join(sorted(allowed - {module}))})')
            continue
        for prefix, owners in THIRD_PARTY.items():
            if header.startswith(prefix) and module not in owners:
                problems.append(f"{where}: <{header}> is wrapped by {', '.join(sorted(owners))}; "
                                f"{module} must go through that module")
    return problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default=pathlib.Path(__file__).resolve().parents[2])
    root = pathlib.Path(parser.parse_args().root)
    problems, files = [], 0
    for module, folder in FOLDERS.items():
        allowed = closure(module)
        for path in sorted((root / folder).glob("*")):
            if path.suffix in (".h", ".cc"):
                files += 1
                problems += check_file(path, module, allowed, root)
    for problem in problems:
        print(problem)
    if files == 0:
        print(f"no sources under {root}")
        return 1
    print(f"check_includes: {files} files, {len(problems)} violations")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
