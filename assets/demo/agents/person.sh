#!/usr/bin/env bash
# The scripted person of `loopwatch demo --no-tui`: waits a moment, then takes
# the decision that lets the run go on (approve, accept, dismiss, ...), with a
# reason.
set -uo pipefail
. "$DEMO_AGENTS/common.sh"
id=$1
pause 2
for d in approve accept dismiss accept-partial retry extend; do
  if lw decide "$id" "$d" --reason "demo: $d, as the scripted person would" >/dev/null 2>&1; then
    break
  fi
done
lw await "$id" >/dev/null
