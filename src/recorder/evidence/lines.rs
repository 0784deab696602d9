//! The evidence a decision dialog shows, built only from parsed fields of a
//! human gate request (rows, paths, findings, code, the contract's lines,
//! a cap's rounds, a broken output with its failing line, reasons, notes,
//! the output path), every piece sanitised. The exact text shown is what the decision's
//! evidence hash covers, so the text is built once, here, and the dialog
//! draws it as it is.

use serde_json::Value;

use crate::model::event::HumanRequest;
use crate::model::{CriterionRow, Finding, FloorRow, SecurityRow, Verdict};
use crate::sanitize::sanitize_line;
use crate::util::sha256_tagged;

/// Longest evidence line kept, in display columns (the dialog wraps them).
pub const EVIDENCE_LINE_MAX: usize = 400;

/// The evidence of a request, as the lines the dialog shows.
pub fn evidence_lines(req: &HumanRequest) -> Vec<String> {
    let mut raw: Vec<String> = Vec::new();
    // Where it came from: the gate that asked, else the review, the
    // finding verifier, the developer, the contract, or a person by hand.
    let origin = crate::model::rules::origin(req);
    raw.push(format!(
        "{} · {origin} · iteration {}",
        req.kind, req.iteration
    ));
    if !req.subject.is_empty() {
        raw.push(format!("subject: {}", req.subject));
    }
    if !req.summary.is_empty() {
        raw.push(format!("summary: {}", req.summary));
    }
    let ev = &req.evidence;
    let refreshed: Vec<&str> = strings(ev, "refreshed").collect();
    raw.extend(
        refreshed
            .iter()
            .map(|l| format!("refreshed before deciding: {l}")),
    );
    // When the evidence was recomputed, it is what is there now.
    let when = if refreshed.is_empty() {
        "as captured when the gate opened"
    } else {
        "as it is now"
    };
    if let Some(v) = ev
        .get("verdict")
        .and_then(|v| serde_json::from_value::<Verdict>(v.clone()).ok())
    {
        raw.push(format!("verdict: {v}"));
    }
    let rounds: Vec<&str> = strings(ev, "rounds").collect();
    if rounds.is_empty() {
        for row in array(ev, "rows") {
            raw.extend(row_lines(row));
        }
    } else {
        // A cap's rows, round by round (the last round's are among them).
        raw.push("rounds of the gate, oldest first:".into());
        raw.extend(rounds.iter().map(|l| format!("  {l}")));
    }
    raw.extend(side_by_side(ev));
    for (key, said) in [
        ("spent", "spent"),
        ("limit", "limit"),
        ("raiseBy", "raise adds"),
    ] {
        if let Some(v) = text(ev, key) {
            raw.push(format!("{said}: {v}"));
        }
    }
    for p in strings(ev, "paths") {
        raw.push(format!("path: {p}"));
    }
    for key in ["diffStat", "diffstat"] {
        if let Some(s) = text(ev, key) {
            raw.extend(s.lines().map(|l| format!("diff stat: {l}")));
        }
    }
    for f in array(ev, "findings") {
        raw.extend(finding_lines(f));
    }
    for l in strings(ev, "justification") {
        raw.push(format!("justification: {l}"));
    }
    let code: Vec<&str> = strings(ev, "code").collect();
    if !code.is_empty() {
        raw.push(format!("code ({when}):"));
        raw.extend(code.iter().map(|l| format!("  {}", whitespace_shown(l))));
    }
    let contract: Vec<&str> = strings(ev, "contract").collect();
    if !contract.is_empty() {
        let when = if refreshed.is_empty() {
            "as read when the gate opened"
        } else {
            when
        };
        raw.push(format!("the contract ({when}):"));
        raw.extend(contract.iter().map(|l| format!("  {l}")));
    }
    for key in ["reason", "structural", "failure"] {
        if let Some(s) = text(ev, key) {
            raw.push(format!("{key}: {s}"));
        }
    }
    let marked: Vec<&str> = strings(ev, "outputLines").collect();
    if !marked.is_empty() {
        raw.push(match ev.get("failingLine").and_then(Value::as_u64) {
            Some(l) => format!("the output, line {l} marked >:"),
            None => "the output (no single line to blame):".into(),
        });
        raw.extend(marked.iter().map(|l| format!("  {l}")));
    } else if let Some(s) = text(ev, "excerpt") {
        raw.extend(s.lines().map(|l| format!("output | {l}")));
    }
    let log: Vec<&str> = strings(ev, "logLines").collect();
    if !log.is_empty() {
        raw.push("the agent's log, as it ended:".into());
        raw.extend(log.iter().map(|l| format!("  {l}")));
    }
    match ev.get("notes") {
        Some(Value::String(s)) => raw.push(format!("note: {s}")),
        Some(Value::Array(a)) => raw.extend(
            a.iter()
                .filter_map(Value::as_str)
                .map(|s| format!("note: {s}")),
        ),
        _ => {}
    }
    for key in ["output", "log"] {
        if let Some(s) = text(ev, key).filter(|s| !s.is_empty()) {
            raw.push(format!("{key}: {s}"));
        }
    }
    raw.iter()
        .map(|l| sanitize_line(l, EVIDENCE_LINE_MAX))
        .collect()
}

/// Width of one column of two rounds side by side.
const COLUMN: usize = 44;

/// Two rounds of a `stagnant` gate side by side: each round's iteration,
/// verdict and code tree, then its failing rows, row by row; then the
/// files changed between them.
fn side_by_side(ev: &Value) -> Vec<String> {
    let rounds: Vec<&Value> = array(ev, "rounds").filter(|r| r.is_object()).collect();
    let [a, b] = rounds.as_slice() else {
        return Vec::new();
    };
    let head = |r: &Value| {
        let tree = text(r, "tree").map_or("no snapshot".to_string(), |t| {
            format!("tree {}", t.chars().take(12).collect::<String>())
        });
        format!(
            "iter {} round {} {} · {tree}",
            r.get("iteration").and_then(Value::as_u64).unwrap_or(0),
            r.get("round").and_then(Value::as_u64).unwrap_or(0),
            text(r, "verdict").unwrap_or("")
        )
    };
    let rows = |r: &Value| -> Vec<String> {
        array(r, "rows")
            .filter_map(|row| text(row, "text").map(str::to_string))
            .collect()
    };
    let cell = |s: &str| {
        let cut = sanitize_line(s, COLUMN);
        let pad = COLUMN.saturating_sub(crate::sanitize::width(&cut));
        format!("{cut}{}", " ".repeat(pad))
    };
    let mut out = vec![
        "the two rounds, side by side:".to_string(),
        format!("  {} │ {}", cell(&head(a)), head(b)),
    ];
    let (ra, rb) = (rows(a), rows(b));
    for i in 0..ra.len().max(rb.len()) {
        let left = ra.get(i).map_or("", String::as_str);
        let right = rb.get(i).map_or("", String::as_str);
        out.push(format!(
            "  {} │ {}",
            cell(left),
            sanitize_line(right, COLUMN)
        ));
    }
    let changed: Vec<&str> = strings(ev, "changedFiles").collect();
    out.push(if changed.is_empty() {
        "files changed between them: none (the contract aside)".to_string()
    } else {
        format!("files changed between them: {}", changed.join(", "))
    });
    out
}

/// The bytes of the evidence file saved with a decision: the lines shown,
/// each ended by `\n`.
pub fn evidence_text(lines: &[String]) -> String {
    let mut t = lines.join("\n");
    t.push('\n');
    t
}

/// The evidence hash of the lines shown: `sha256:<hex>` of exactly the
/// bytes of [`evidence_text`], the evidence file's content.
pub fn evidence_hash(lines: &[String]) -> String {
    sha256_tagged(evidence_text(lines).as_bytes())
}

fn array<'a>(ev: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    ev.get(key).and_then(Value::as_array).into_iter().flatten()
}

/// The strings of the array `key` (other items are skipped).
fn strings<'a>(ev: &'a Value, key: &str) -> impl Iterator<Item = &'a str> {
    array(ev, key).filter_map(Value::as_str)
}

/// The string `key`, when it is one.
fn text<'a>(ev: &'a Value, key: &str) -> Option<&'a str> {
    ev.get(key).and_then(Value::as_str)
}

/// A row's line, then an indented `label: text` line for each text that
/// is not empty.
fn with_details(head: String, details: &[(&str, &str)]) -> Vec<String> {
    let mut out = vec![head];
    for (label, text) in details.iter().filter(|(_, t)| !t.is_empty()) {
        out.push(format!("  {label}: {text}"));
    }
    out
}

fn row_lines(row: &Value) -> Vec<String> {
    if let Some(s) = row.as_str() {
        return vec![format!("row: {s}")];
    }
    if let Ok(r) = serde_json::from_value::<CriterionRow>(row.clone()) {
        let head = format!("criterion {} {}: {}", r.id, r.status.as_str(), r.text);
        return with_details(head, &[("detail", &r.detail)]);
    }
    if let Ok(r) = serde_json::from_value::<FloorRow>(row.clone()) {
        let head = format!("criterion {} {}: {}", r.id, r.state.as_str(), r.text);
        return with_details(head, &[("evidence", &r.evidence)]);
    }
    if let Ok(r) = serde_json::from_value::<SecurityRow>(row.clone()) {
        return vec![format!(
            "BLOCKING {} {} {} {}: {}",
            r.n, r.severity, r.rule, r.location, r.why
        )];
    }
    match row.as_object() {
        Some(m) => {
            let parts: Vec<String> = m
                .iter()
                .filter_map(|(k, v)| match v {
                    Value::String(s) => Some(format!("{k}={s}")),
                    Value::Number(n) => Some(format!("{k}={n}")),
                    Value::Bool(b) => Some(format!("{k}={b}")),
                    _ => None,
                })
                .collect();
            vec![format!("row: {}", parts.join(" "))]
        }
        None => Vec::new(),
    }
}

fn finding_lines(f: &Value) -> Vec<String> {
    let Ok(f) = serde_json::from_value::<Finding>(f.clone()) else {
        return Vec::new();
    };
    let head = format!(
        "finding {} {} {}:{} {}: {}",
        f.id,
        f.severity,
        f.path,
        f.lines,
        f.verdict.as_str(),
        f.claim
    );
    with_details(head, &[("evidence", &f.evidence), ("note", &f.note)])
}

/// A tab's mark in a line of code: `→` then spaces to the next tab stop.
pub const TAB_MARK: char = '→';
/// A trailing space's mark in a line of code.
pub const TRAILING_SPACE_MARK: char = '·';

/// A line of code (a hunk's `+`/`-`/` ` line, a cited `>  12 | ` line) with
/// its whitespace as it is: each tab marked and taken to its tab stop,
/// counted from where the code starts (after the hunk's mark or the line
/// number), and trailing spaces marked, so a Makefile recipe's tab or a
/// line's trailing blank is seen. A carriage return is marked by the
/// sanitiser (`␍`).
pub fn whitespace_shown(line: &str) -> String {
    let start = match line.find(" | ") {
        Some(i)
            if line[..i]
                .trim_start_matches(['>', ' '])
                .chars()
                .all(|c| c.is_ascii_digit()) =>
        {
            i + 3
        }
        _ if line.starts_with(['+', '-', ' '])
            && !line.starts_with("+++")
            && !line.starts_with("---") =>
        {
            1
        }
        _ => return line.to_string(),
    };
    let (head, code) = line.split_at(start);
    let body = code.trim_end_matches([' ', '\t']);
    let trailing = &code[body.len()..];
    let mut out = String::with_capacity(line.len() + 8);
    out.push_str(head);
    let mut col = 0usize;
    let mut push = |c: char, out: &mut String| {
        if c == '\t' {
            let n = crate::sanitize::TAB_STOP - col % crate::sanitize::TAB_STOP;
            out.push(TAB_MARK);
            out.extend(std::iter::repeat_n(' ', n - 1));
            col += n;
        } else {
            out.push(c);
            col += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        }
    };
    for c in body.chars() {
        push(c, &mut out);
    }
    for c in trailing.chars() {
        push(if c == ' ' { TRAILING_SPACE_MARK } else { c }, &mut out);
    }
    out
}

#[cfg(test)]
mod whitespace_tests {
    use super::whitespace_shown;

    #[test]
    fn tabs_are_marked_at_their_stops_and_trailing_spaces_seen() {
        assert_eq!(whitespace_shown("+\tcargo build"), "+→   cargo build");
        assert_eq!(whitespace_shown("-a\tb"), "-a→  b");
        assert_eq!(whitespace_shown(" x  "), " x··");
        assert_eq!(whitespace_shown(">   12 | \tx"), ">   12 | →   x");
        assert_eq!(whitespace_shown("     3 | y \t"), "     3 | y·→ ");
        // Headers and other lines are left as they are.
        assert_eq!(whitespace_shown("@@ -1,2 +1,3 @@"), "@@ -1,2 +1,3 @@");
        assert_eq!(whitespace_shown("+++ b/Makefile"), "+++ b/Makefile");
        assert_eq!(whitespace_shown("Makefile: changed"), "Makefile: changed");
        // A carriage return is kept for the sanitiser to mark.
        assert_eq!(whitespace_shown("+x\r"), "+x\r");
    }
}
