# Shared by the scripted agents of `loopwatch demo`: pacing and call counters.
# DEMO_SPEED (default 1) divides every pause; DEMO_STATE holds the counters.
pause() {
  local s=${1:-2}
  sleep "$(awk -v s="$s" -v f="${DEMO_SPEED:-1}" 'BEGIN { if (f <= 0) f = 1; printf "%.3f", s / f }')"
}
# count NAME: increments and prints how many times NAME was called.
count() {
  local f="$DEMO_STATE/$1.count" n=0
  [ -f "$f" ] && n=$(cat "$f")
  n=$((n + 1))
  echo "$n" >"$f"
  echo "$n"
}
lw() { "$LOOPWATCH" "$@"; }
# record ARGS...: a recording command; 10-13 say what comes next, not failure.
record() {
  local rc=0
  "$LOOPWATCH" "$@" >/dev/null || rc=$?
  case $rc in 0 | 10 | 11 | 12 | 13) return 0 ;; *) return "$rc" ;; esac
}
