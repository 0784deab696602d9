#!/usr/bin/env bash
# Scripted security auditor: BLOCK on the debug eval, PASS once it is gone.
set -euo pipefail
. "$DEMO_AGENTS/common.sh"
count auditor >/dev/null
pause 3
if grep -q 'eval' "$DEMO_WORKTREE/src/total.sh"; then
  line=$(grep -n 'eval' "$DEMO_WORKTREE/src/total.sh" | cut -d: -f1)
  cat <<OUT
SECURITY — VERDICT: BLOCK(1)
TOOL: semgrep 1.98.0 — p/security-audit
SCOPE: 2 files
BLOCKING:
  1. [HIGH] bash.lang.security.eval-injection — src/total.sh:$line — eval of an environment variable runs arbitrary code — hint: remove the debug hook
REPORTED (non-blocking):
  - [LOW] bash.lang.best-practice.set-euo — src/total.sh:1
PROOF: semgrep 212 rules on 2 files → 2 findings; checklist 9 checks → 0 findings
OUT
else
  cat <<'OUT'
SECURITY — VERDICT: PASS
TOOL: semgrep 1.98.0 — p/security-audit
SCOPE: 2 files
BLOCKING:
REPORTED (non-blocking):
  - [LOW] bash.lang.best-practice.set-euo — src/total.sh:1
PROOF: semgrep 212 rules on 2 files → 1 findings; checklist 9 checks → 0 findings
OUT
fi
