#!/usr/bin/env bash
# loopwatch loop driver for orchestrators that keep their own loop (`loopwatch
# run` drives the same loop itself from loopwatch.toml). Runs GATE 0 -> GATE 1 -> GATE 2 on a contract with the
# agents you name, records every step through loopwatch, and stops for a person
# whenever the loop's rules say so. Usage:
#
#   LW_DEV_CMD=... LW_VERIFY_CMD=... LW_AUDIT_CMD=... loop.sh CONTRACT [FLOW]
#
# Agents are commands run with `bash -c`; they see LW_CONTRACT, LW_ITERATION,
# LW_WORK (a scratch folder) and LW_LAST_OUTPUT (the last gate output, for the
# developer). Optional: LW_REVIEW_CMD prints finding-verifier verdicts and writes
# the review's findings to $LW_WORK/findings.json; LW_TRIAGE_CMD then runs
# verify-by-test (it calls `loopwatch triage apply` and `loopwatch record
# triage` itself); LW_AWAIT_CMD replaces
# `loopwatch await` (it gets the gate id as $1); LOOPWATCH names the binary.
#
# Exit: 0 the run ended complete or partial, 1 it ended otherwise, 2 bad usage
# or a loopwatch error.
set -uo pipefail

LW=${LOOPWATCH:-loopwatch}
contract=${1:?usage: loop.sh CONTRACT [FLOW]}
flow=${2:-feat}
: "${LW_DEV_CMD:?set LW_DEV_CMD}" "${LW_VERIFY_CMD:?set LW_VERIFY_CMD}" "${LW_AUDIT_CMD:?set LW_AUDIT_CMD}"

LW_WORK=$(mktemp -d) || exit 2
trap 'rm -rf "$LW_WORK"' EXIT
export LW_WORK LW_CONTRACT="$contract" LW_LAST_OUTPUT="" LW_ITERATION=1

lw() { "$LW" "$@"; }

# A recording command's exit codes: 0 go on, 10 human, 11 dev, 12 retry, 13 stop,
# 2 bad input. The loop below does not branch on them one by one: after every
# step it asks `loopwatch status --next`, which applies the same rules.
record() {
  lw "$@"
  local rc=$?
  case $rc in 0 | 10 | 11 | 12 | 13) return 0 ;; *) echo "loop.sh: loopwatch $1 failed (exit $rc)" >&2; exit 2 ;; esac
}

lw record run-start --flow "$flow" --contract "$contract" >/dev/null || exit 2
# Iteration 1: the developer's first implementation, then the gates.
bash -c "$LW_DEV_CMD" || { echo "loop.sh: the developer agent failed" >&2; exit 2; }
reviewed=0

while :; do
  read -r action arg < <(lw status --next) || exit 2
  case $action in
    next-gate | retry)
      case $arg in
        floor)
          # GATE 0: byte-compatible floor; its exit codes are the floor's own
          # (0 MET, 2 UNMET/ERROR, 3 ABANDONED); loopwatch records the round.
          LW_LAST_OUTPUT="$LW_WORK/floor.out"
          lw gate0 run "$contract" >"$LW_LAST_OUTPUT"
          ;;
        conformity)
          LW_LAST_OUTPUT="$LW_WORK/conformity.out"
          bash -c "$LW_VERIFY_CMD" >"$LW_LAST_OUTPUT" 2>/dev/null
          record record gate conformity --output "$LW_LAST_OUTPUT"
          ;;
        security)
          # Once per iteration, after conformity passes: the review's findings
          # are verified one by one, then verify-by-test (both optional).
          if [ -n "${LW_REVIEW_CMD:-}" ] && [ "$reviewed" -ne "$LW_ITERATION" ]; then
            reviewed=$LW_ITERATION
            rm -f "$LW_WORK/findings.json"
            bash -c "$LW_REVIEW_CMD" >"$LW_WORK/verdicts.txt" 2>/dev/null
            if [ -s "$LW_WORK/findings.json" ]; then
              record record findings --file "$LW_WORK/verdicts.txt" --findings "$LW_WORK/findings.json"
            else
              record record findings --file "$LW_WORK/verdicts.txt"
            fi
            if [ -n "${LW_TRIAGE_CMD:-}" ]; then
              bash -c "$LW_TRIAGE_CMD" || { echo "loop.sh: the triage step failed" >&2; exit 2; }
            fi
            continue
          fi
          LW_LAST_OUTPUT="$LW_WORK/security.out"
          bash -c "$LW_AUDIT_CMD" >"$LW_LAST_OUTPUT" 2>/dev/null
          record record gate security --output "$LW_LAST_OUTPUT"
          ;;
        *) echo "loop.sh: unknown gate '$arg'" >&2; exit 2 ;;
      esac
      ;;
    dev)
      bash -c "$LW_DEV_CMD" || { echo "loop.sh: the developer agent failed" >&2; exit 2; }
      record record dev --input "${LW_LAST_OUTPUT:-}"
      LW_ITERATION=$((LW_ITERATION + 1))
      ;;
    human)
      if [ -n "${LW_AWAIT_CMD:-}" ]; then
        bash -c "$LW_AWAIT_CMD" _ "$arg" >/dev/null || exit 2
      else
        lw await "$arg" >/dev/null || exit 2
      fi
      ;;
    done)
      record record run-end --status "${arg:-complete}"
      exit 0
      ;;
    stop)
      record record run-end --status "${arg:-stopped}"
      exit 1
      ;;
    *) echo "loop.sh: unexpected next step '$action'" >&2; exit 2 ;;
  esac
done
