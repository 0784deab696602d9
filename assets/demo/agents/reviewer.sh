#!/usr/bin/env bash
# Scripted reviewer: the first review finds four things (one blocking);
# the later ones find nothing more.
set -euo pipefail
. "$DEMO_AGENTS/common.sh"
n=$(count reviewer)
pause 2
if [ "$n" -gt 1 ]; then
  echo "REVIEW of the invoice total: nothing more to report."
  exit 0
fi
cat <<'OUT'
REVIEW of the invoice total (src/total.sh, tests/total.test.sh)

F1 [blocking] src/total.sh:5 — a line that is not a number (a CSV header) is added as 0 without a word
F2 [major] src/total.sh:3 — --help exits non-zero
F3 [minor] src/total.sh:5 — the total of an empty line is not tested
F4 [minor] src/total.sh:5 — awk is slow on a million lines
OUT
