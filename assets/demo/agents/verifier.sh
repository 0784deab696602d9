#!/usr/bin/env bash
# Scripted conformity verifier: prints a GATE 1 verdict in the agents' format.
set -euo pipefail
. "$DEMO_AGENTS/common.sh"
n=$(count verifier)
pause 3
c="$LW_CONTRACT"
if [ "$n" -eq 1 ] && [ -f "$DEMO_WORKTREE/Makefile" ]; then
  cat <<OUT
VERIFY — VERDICT: ECARTS(1)
CONTRACT: $c
CRITERIA:
  1. The total of 1.50 and 2.25 is printed as 3.75 — MET — EVIDENCE: MET exit=0 marker-found :: TOTAL_OK
  2. No input prints 0.00 — MET — EVIDENCE: MET exit=0 marker-found :: EMPTY_OK
  3. The usage line reads naturally — MET — read src/total.sh:3
SCOPE: in-scope 2 files; out-of-scope: Makefile
FLOOR: clean
PROOF: read 3 files, ran bash src/total.sh --help, checked 3/3 criteria
OUT
elif [ "$n" -eq 2 ]; then
  # The usage line cannot be judged from here: a person has to look.
  cat <<OUT
VERIFY — VERDICT: ECARTS(1)
CONTRACT: $c
CRITERIA:
  1. The total of 1.50 and 2.25 is printed as 3.75 — MET — EVIDENCE: MET exit=0 marker-found :: TOTAL_OK
  2. No input prints 0.00 — MET — EVIDENCE: MET exit=0 marker-found :: EMPTY_OK
  3. The usage line reads naturally — UNVERIFIABLE — "reads naturally" needs a person: the line printed by bash src/total.sh --help (src/total.sh:3)
SCOPE: in-scope 2 files; out-of-scope: none
FLOOR: clean
PROOF: read 3 files, ran bash src/total.sh --help, checked 2/3 criteria
OUT
else
  cat <<OUT
VERIFY — VERDICT: CONFORME
CONTRACT: $c
CRITERIA:
  1. The total of 1.50 and 2.25 is printed as 3.75 — MET — EVIDENCE: MET exit=0 marker-found :: TOTAL_OK
  2. No input prints 0.00 — MET — EVIDENCE: MET exit=0 marker-found :: EMPTY_OK
  3. The usage line reads naturally — MET — read src/total.sh:3
SCOPE: in-scope 2 files; out-of-scope: none
FLOOR: clean
PROOF: read 3 files, ran bash src/total.sh --help, checked 3/3 criteria
OUT
fi
