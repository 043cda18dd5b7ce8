#!/usr/bin/env bash
# The multi-shard engine's size and duplication, counted from the source alone (no build):
#   * lines and files in proxy/session/ (.cc and .h);
#   * loops that read server frames in proxy/session/ (calls of wire::read_frame with
#     Sender::Server, or of LegEngine::read_checked, which wraps it) and the classes they belong
#     to; and the places that check a server's frames against the limits and by
#     wire::ServerMessageCheck (read_frame with Sender::Server, and ServerMessageCheck calls, in
#     .cc and .h files: the one check is inline);
#   * Leg types: structs/classes named Leg, *Leg or *LegState in proxy/ (one shard's part of a
#     multi-shard runner);
#   * pool::Waiter implementations (classes deriving from pool::Pool::Waiter);
#   * two-phase-commit drivers: files outside the coordinator that create a TwoPhaseCommit;
#   * the session's dispatch on its request state: `switch (request_.state)` statements, and
#     assignments of request_.state (one: inside Session::set_request_state, which checks the
#     transition table);
#   * load_be16/load_be32 calls in proxy/session/ and proxy/router/;
#   * raw byte reads and writes (tests/lint/check_byte_reads.py's patterns): outside wire/ and
#     auth/, and outside every owner of a binary format the lint allows (docs/architecture.md §2).
# Usage: scripts/engine_counts.sh [DIR]   DIR: a checkout to count (default: this one), e.g.
#        git worktree add /tmp/before 238ef21 && scripts/engine_counts.sh /tmp/before
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROOT=$(cd "${1:-$HERE}" && pwd)
cd "$ROOT"

mapfile -t session_files < <(find proxy/session -maxdepth 1 -name '*.cc' -o -maxdepth 1 -name '*.h' | sort)
lines=$(cat "${session_files[@]}" | wc -l)
echo "proxy/session: ${#session_files[@]} files, ${lines} lines"

python3 - <<'PY'
import pathlib
import re

# A loop reads with wire::read_frame, or with LegEngine::read_checked (which wraps it; its own
# read_frame is not a loop).
read = re.compile(r"read_frame\([^;]*Sender::Server|\bread_checked\(")
definition = re.compile(r"^[A-Za-z][\w:<>,*& ]*?\b(\w+)::(~?\w+)\(")
loops, classes = 0, set()
for path in sorted(pathlib.Path("proxy/session").glob("*.cc")):
    owner = function = None
    for line in path.read_text(encoding="utf-8").splitlines():
        match = definition.match(line)
        if match:
            owner, function = match.group(1), match.group(2)
        if read.search(line) and function != "read_checked":
            loops += 1
            classes.add(owner or path.name)
print(f"server-frame reading loops in proxy/session: {loops}, in {len(classes)} classes "
      f"({', '.join(sorted(classes))})")
checks = sum(len(re.findall(r"read_frame\([^;]*Sender::Server|check\.on_message\(", path.read_text(encoding="utf-8")))
             for pattern in ("*.cc", "*.h") for path in pathlib.Path("proxy/session").glob(pattern))
print(f"server-frame limit and shape checks in proxy/session: {checks}")
PY

legs=$(grep -rlE '\b(struct|class) (\w*Leg|\w*LegState)\s*(final\s*)?[:{]' proxy --include='*.h' --include='*.cc' | sort |
       xargs -r grep -cE '\b(struct|class) (\w*Leg|\w*LegState)\s*(final\s*)?[:{]' | sed 's/:1$//' | tr '\n' ' ')
legs_count=$(grep -rhoE '\b(struct|class) (\w*Leg|\w*LegState)\s*(final\s*)?[:{]' proxy --include='*.h' --include='*.cc' | wc -l)
echo "Leg types: ${legs_count} (${legs% })"

waiters=$(grep -rlE '(public|protected|private)\s+(pool::)?(Pool::)?Waiter\b' proxy --include='*.h' | sort | tr '\n' ' ')
echo "pool::Waiter implementations: $(echo "$waiters" | wc -w) (${waiters% })"

drivers=$(grep -rlE 'make_unique<TwoPhaseCommit>|TwoPhaseCommit\s*\(' proxy --include='*.cc' |
          grep -v 'two_phase_commit\.cc$' | sort | tr '\n' ' ' || true)
echo "two-phase-commit drivers: $(echo "$drivers" | wc -w) (${drivers% })"

switches=$(grep -rhoE 'switch \(request_\.state\)' proxy/session | wc -l)
assignments=$(grep -rhoE 'request_\.state = ' proxy/session | wc -l)
echo "switches on the request state: ${switches}; assignments of it: ${assignments}"

loads=$(grep -rhoE '\bload_be(16|32)\(' proxy/session proxy/router | wc -l)
echo "load_be16/load_be32 calls in proxy/session and proxy/router: ${loads}"
echo "raw byte reads/writes outside wire/ and auth/: $(python3 "$HERE/tests/lint/check_byte_reads.py" --root "$ROOT" --count-outside-codec)"
echo "raw byte reads/writes outside their owners (the lint's rule): $(python3 "$HERE/tests/lint/check_byte_reads.py" --root "$ROOT" --count)"
