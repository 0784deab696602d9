#!/usr/bin/env bash
# Scripted triage + verify-by-test: the first review's findings are sorted,
# the riskiest get a repro test each (one confirmed, one not reproduced, one
# inconclusive), and the results go through `loopwatch triage apply` (whose
# evidence gate checks the passing log before any downgrade).
set -euo pipefail
. "$DEMO_AGENTS/common.sh"
n=$(count triage)
[ "$n" -gt 1 ] && exit 0
pause 2
pipe="$DEMO_WORKTREE/.pipeline"
cat >"$pipe/verify-1.test.log" <<'LOG'
running 1 test
test tests::total_rounds_half_up ... FAILED

failures:

---- tests::total_rounds_half_up stdout ----
expected 0.11, got 0.10

failures:
    tests::total_rounds_half_up

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s
LOG
cat >"$pipe/verify-2.test.log" <<'LOG'
running 1 test
test tests::empty_input_prints_zero ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
LOG
cat >"$pipe/verify-3.test.log" <<'LOG'
error[E0425]: cannot find function `total_of` in this scope
 --> tests/total.rs:9:17
error: could not compile `invoice` (test "total") due to 1 previous error
LOG
it=${LW_ITERATION:-1}
triage="$pipe/triage-$it.json"
cat >"$triage" <<JSON
{
  "schemaVersion": "3.2.0",
  "iteration": $it,
  "accepted": [
    {"id": "F1", "severity": "blocking", "title": "total not rounded half up", "path": "src/total.sh", "lines": "5", "claim": "amounts with more than two decimals are not rounded half up", "reviewer": "correctness"},
    {"id": "F4", "severity": "blocking", "title": "empty input prints nothing", "path": "src/total.sh", "lines": "5", "claim": "empty input prints nothing", "reviewer": "robustness"},
    {"id": "F5", "severity": "blocking", "title": "negative amounts", "path": "src/total.sh", "lines": "4", "claim": "a negative amount breaks the total", "reviewer": "robustness"}
  ],
  "deferred": [
    {"id": "F3", "severity": "minor", "title": "slow on huge inputs", "path": "src/total.sh", "lines": "5", "claim": "awk is slow on a million lines", "reviewer": "performance", "reason": "unverifiable without a benchmark"}
  ],
  "rejected": [
    {"id": "F2", "severity": "major", "title": "--help exit code", "path": "src/total.sh", "lines": "3", "claim": "--help exits non-zero", "reviewer": "correctness", "reason": "finding verifier: FALSE"}
  ]
}
JSON
cat >"$LW_WORK/verification.json" <<'JSON'
{
  "maxFindings": 3,
  "durationMs": 41000,
  "timedOut": false,
  "results": [
    {"finding": "F1", "result": "confirmed", "testRef": "tests::total_rounds_half_up", "file": "tests/total.rs", "log": "verify-1.test.log", "note": ""},
    {"finding": "F4", "result": "not-reproduced", "testRef": "tests::empty_input_prints_zero", "file": "tests/total.rs", "log": "verify-2.test.log", "note": ""},
    {"finding": "F5", "result": "inconclusive", "testRef": "tests::negative_amount", "file": "tests/total.rs", "log": "verify-3.test.log", "note": "compile error: the helper the test needs does not exist"}
  ]
}
JSON
lw triage apply "$triage" --verification "$LW_WORK/verification.json" >/dev/null
record record triage "$triage"
