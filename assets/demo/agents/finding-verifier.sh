#!/usr/bin/env bash
# Scripted finding verifier, one step per dispatch ($LW_STEP):
# - parse: the review's findings as the JSON list the graph expects;
# - verify: one finding ($LW_FINDING_ID) against the worktree. F1 is
#   VERIFIED, F2 FALSE, F3's first answer is fenced and has no evidence
#   (the verdict gate rejects it; the second passes), F4 UNVERIFIABLE (a
#   person decides). Lanes run at once; each answers only after the lane
#   before it has its verdict, so the journal reads the same every time.
set -euo pipefail
. "$DEMO_AGENTS/common.sh"
input=$(cat)
case ${LW_STEP:-} in
  parse)
    pause 1
    case $input in
      *"F1 [blocking]"*) ;;
      *) printf '{"findings_list": [], "project_dir": "%s"}\n' "$DEMO_WORKTREE"; exit 0 ;;
    esac
    cat <<JSON
\`\`\`json
{"findings_list": [
  {"id": "F1", "severity": "blocking", "path": "src/total.sh", "lines": "5", "claim": "a line that is not a number (a CSV header) is added as 0 without a word"},
  {"id": "F2", "severity": "major", "path": "src/total.sh", "lines": "3", "claim": "--help exits non-zero"},
  {"id": "F3", "severity": "minor", "path": "src/total.sh", "lines": "5", "claim": "the total of an empty line is not tested"},
  {"id": "F4", "severity": "minor", "path": "src/total.sh", "lines": "5", "claim": "awk is slow on a million lines"}
], "project_dir": "$DEMO_WORKTREE"}
\`\`\`
JSON
    ;;
  verify)
    id=$LW_FINDING_ID
    k=$(count "lane-$id")
    idx=${id#F}
    pause "$(awk -v i="$idx" 'BEGIN { printf "%.1f", 1 + i * 0.7 }')"
    if [ "$idx" -gt 1 ]; then
      prev="F$((idx - 1))"
      needle="\"finding\":\"$prev\",\"index\":$((idx - 2)),\"state\":\"done\""
      for _ in $(seq 3000); do
        grep -qF "$needle" "$LW_PIPELINE/events.jsonl" && break
        sleep 0.01
      done
    fi
    case $id$k in
      F1*) echo '{"id": "F1", "verdict": "VERIFIED", "evidence": "src/total.sh:5: awk adds $1 whatever it is: printf \"amount\\n1.50\\n\" | bash src/total.sh prints 1.50", "note": ""}' ;;
      F2*) echo '{"id": "F2", "verdict": "FALSE", "evidence": "src/total.sh:3: the usage line is followed by exit 0", "note": ""}' ;;
      F31) printf 'Verdict below.\n```json\n{"id": "F3", "verdict": "VERIFIED", "note": "tests/total.test.sh has no empty-line case"}\n```\n' ;;
      F3*) printf '```json\n{"id": "F3", "verdict": "VERIFIED", "evidence": "tests/total.test.sh:2: only 1.50 and 2.25 are tested", "note": ""}\n```\n' ;;
      *) echo "{\"id\": \"$id\", \"verdict\": \"UNVERIFIABLE\", \"evidence\": \"\", \"note\": \"needs a million-line input and a timer\"}" ;;
    esac
    ;;
esac
