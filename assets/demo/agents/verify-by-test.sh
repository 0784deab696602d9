#!/usr/bin/env bash
# Scripted verify-by-test agent: one minimal repro test per accepted
# blocking finding it is given (the demo has one, F1), written, not run:
# loopwatch runs it alone and judges it from its log.
set -euo pipefail
. "$DEMO_AGENTS/common.sh"
input=$(cat)
cd "$DEMO_WORKTREE"
pause 2
case $input in
  *F1*) ;;
  *) echo "[]"; exit 0 ;;
esac
mkdir -p tests
cat >tests/repro_f1.rs <<'RS'
//! F1: a line that is not a number is added as 0 without a word.
use std::io::Write;
use std::process::{Command, Stdio};

#[test]
fn a_line_that_is_not_a_number_is_reported() {
    let mut child = Command::new("bash")
        .arg("src/total.sh")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run src/total.sh");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"amount\n1.50\n")
        .expect("write the amounts");
    let out = child.wait_with_output().expect("wait for src/total.sh");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("not a number"),
        "the header line was summed without a word: stderr {stderr:?}"
    );
}
RS
cat <<'OUT'
Wrote one repro test; it is expected to fail until F1 is fixed.
```json
[{"finding": "F1", "file": "tests/repro_f1.rs", "testRef": "a_line_that_is_not_a_number_is_reported"}]
```
OUT
