#!/usr/bin/env bash
# Scripted developer: each hand-off changes the project like a real agent would.
set -euo pipefail
. "$DEMO_AGENTS/common.sh"
n=$(count developer)
cd "$DEMO_WORKTREE"
pause 3
case $n in
  1) # First attempt: the total loses its cents.
    mkdir -p src tests
    cat >src/total.sh <<'SH'
#!/usr/bin/env bash
# total.sh: prints the sum of the amounts read on stdin.
[ "${1:-}" = "--help" ] && { echo "usage: total.sh < amounts"; exit 0; }
awk '{ s += $1 } END { printf "%d\n", s }'
SH
    printf '#!/usr/bin/env bash\nprintf "1.50\\n2.25\\n" | bash src/total.sh\n' >tests/total.test.sh
    ;;
  2) # Cents fixed; a debug eval slipped in, and the Makefile was touched.
    cat >src/total.sh <<'SH'
#!/usr/bin/env bash
# total.sh: prints the sum of the amounts read on stdin, with two decimals.
[ "${1:-}" = "--help" ] && { echo "usage: total.sh < amounts   (prints the total with cents)"; exit 0; }
[ -n "${TOTAL_DEBUG:-}" ] && eval "$TOTAL_DEBUG"
awk '{ s += $1 } END { printf "%.2f\n", s }'
SH
    printf 'test:\n\tbash tests/total.test.sh\n' >Makefile
    ;;
  3) # The review's blocking finding: a line that is not a number is refused.
    sed -i 's|^awk .*|awk '"'"'$1 !~ /^-?[0-9]+([.][0-9]+)?$/ { print "total.sh: not a number: " $0 > "/dev/stderr"; next } { s += $1 } END { printf "%.2f\\n", s }'"'"'|' src/total.sh
    ;;
  *) # The auditor's finding: the debug eval goes. A denied Makefile goes too.
    sed -i '/TOTAL_DEBUG/d' src/total.sh
    if "$LOOPWATCH" status --json | grep -q '"decision": "deny"'; then
      rm -f Makefile
    fi
    ;;
esac
git add -A >/dev/null 2>&1 || true
