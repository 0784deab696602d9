#!/usr/bin/env bash
# Scripted review + finding verifier: the first review finds five things;
# prints the verifier's verdicts and leaves the review's list in
# $LW_WORK/findings.json (matched to the verdicts by position).
set -euo pipefail
. "$DEMO_AGENTS/common.sh"
n=$(count reviewer)
pause 2
if [ "$n" -gt 1 ]; then
  echo '[]' >"$LW_WORK/findings.json"
  echo 'FINDING_VERIFIER_RESULTS'
  echo '[]'
  exit 0
fi
cat >"$LW_WORK/findings.json" <<'JSON'
[
  {"id": "F1", "severity": "blocking", "path": "src/total.sh", "lines": "5", "claim": "amounts with more than two decimals are not rounded half up"},
  {"id": "F2", "severity": "major", "path": "src/total.sh", "lines": "3", "claim": "--help exits non-zero"},
  {"id": "F3", "severity": "minor", "path": "src/total.sh", "lines": "5", "claim": "awk is slow on a million lines"},
  {"id": "F4", "severity": "blocking", "path": "src/total.sh", "lines": "5", "claim": "empty input prints nothing"},
  {"id": "F5", "severity": "blocking", "path": "src/total.sh", "lines": "4", "claim": "a negative amount breaks the total"}
]
JSON
cat <<'OUT'
FINDING_VERIFIER_RESULTS
VERIFIED = keep the finding; FALSE = drop it; UNVERIFIABLE = keep it, marked unverified.
[
  {"id": "F1", "verdict": "VERIFIED", "evidence": "src/total.sh:5: printf \"%.2f\\n\", s", "note": ""},
  {"id": "F2", "verdict": "FALSE", "evidence": "src/total.sh:3: exit 0 after the usage line", "note": ""},
  {"id": "F3", "verdict": "UNVERIFIABLE", "evidence": "", "note": "needs a million-line input and a timer"},
  {"id": "F4", "verdict": "VERIFIED", "evidence": "src/total.sh:5: END block prints s", "note": ""},
  {"id": "F5", "verdict": "VERIFIED", "evidence": "src/total.sh:5: s += $1", "note": ""}
]
OUT
