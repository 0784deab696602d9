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
    let gate = req.gate.map_or_else(
        || "none".to_string(),
        |g| format!("GATE {} {g}", g.number()),
    );
    raw.push(format!(
        "{} · {gate} · iteration {}",
        req.kind, req.iteration
    ));
    if !req.subject.is_empty() {
        raw.push(format!("subject: {}", req.subject));
    }
    if !req.summary.is_empty() {
        raw.push(format!("summary: {}", req.summary));
    }
    let ev = &req.evidence;
    let refreshed: Vec<&str> = array(ev, "refreshed").filter_map(Value::as_str).collect();
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
    let rounds: Vec<&str> = array(ev, "rounds").filter_map(Value::as_str).collect();
    if rounds.is_empty() {
        for row in array(ev, "rows") {
            raw.extend(row_lines(row));
        }
    } else {
        // A cap's rows, round by round (the last round's are among them).
        raw.push("rounds of the gate, oldest first:".into());
        raw.extend(rounds.iter().map(|l| format!("  {l}")));
    }
    for p in array(ev, "paths").filter_map(Value::as_str) {
        raw.push(format!("path: {p}"));
    }
    for key in ["diffStat", "diffstat"] {
        if let Some(s) = ev.get(key).and_then(Value::as_str) {
            raw.extend(s.lines().map(|l| format!("diff stat: {l}")));
        }
    }
    for f in array(ev, "findings") {
        raw.extend(finding_lines(f));
    }
    for l in array(ev, "justification").filter_map(Value::as_str) {
        raw.push(format!("justification: {l}"));
    }
    let code: Vec<&str> = array(ev, "code").filter_map(Value::as_str).collect();
    if !code.is_empty() {
        raw.push(format!("code ({when}):"));
        raw.extend(code.iter().map(|l| format!("  {l}")));
    }
    let contract: Vec<&str> = array(ev, "contract").filter_map(Value::as_str).collect();
    if !contract.is_empty() {
        let when = if refreshed.is_empty() {
            "as read when the gate opened"
        } else {
            when
        };
        raw.push(format!("the contract ({when}):"));
        raw.extend(contract.iter().map(|l| format!("  {l}")));
    }
    if let Some(s) = ev.get("reason").and_then(Value::as_str) {
        raw.push(format!("reason: {s}"));
    }
    if let Some(s) = ev.get("structural").and_then(Value::as_str) {
        raw.push(format!("structural: {s}"));
    }
    if let Some(s) = ev.get("failure").and_then(Value::as_str) {
        raw.push(format!("failure: {s}"));
    }
    let marked: Vec<&str> = array(ev, "outputLines").filter_map(Value::as_str).collect();
    if !marked.is_empty() {
        raw.push(match ev.get("failingLine").and_then(Value::as_u64) {
            Some(l) => format!("the output, line {l} marked >:"),
            None => "the output (no single line to blame):".into(),
        });
        raw.extend(marked.iter().map(|l| format!("  {l}")));
    } else if let Some(s) = ev.get("excerpt").and_then(Value::as_str) {
        raw.extend(s.lines().map(|l| format!("output | {l}")));
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
    if let Some(s) = ev.get("output").and_then(Value::as_str)
        && !s.is_empty()
    {
        raw.push(format!("output: {s}"));
    }
    if let Some(s) = ev.get("log").and_then(Value::as_str)
        && !s.is_empty()
    {
        raw.push(format!("log: {s}"));
    }
    raw.iter()
        .map(|l| sanitize_line(l, EVIDENCE_LINE_MAX))
        .collect()
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

fn row_lines(row: &Value) -> Vec<String> {
    if let Some(s) = row.as_str() {
        return vec![format!("row: {s}")];
    }
    if let Ok(r) = serde_json::from_value::<CriterionRow>(row.clone()) {
        let mut out = vec![format!(
            "criterion {} {}: {}",
            r.id,
            r.status.as_str(),
            r.text
        )];
        if !r.detail.is_empty() {
            out.push(format!("  detail: {}", r.detail));
        }
        return out;
    }
    if let Ok(r) = serde_json::from_value::<FloorRow>(row.clone()) {
        let mut out = vec![format!(
            "criterion {} {}: {}",
            r.id,
            r.state.as_str(),
            r.text
        )];
        if !r.evidence.is_empty() {
            out.push(format!("  evidence: {}", r.evidence));
        }
        return out;
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
    let mut out = vec![format!(
        "finding {} {} {}:{} {}: {}",
        f.id,
        f.severity,
        f.path,
        f.lines,
        f.verdict.as_str(),
        f.claim
    )];
    if !f.evidence.is_empty() {
        out.push(format!("  evidence: {}", f.evidence));
    }
    if !f.note.is_empty() {
        out.push(format!("  note: {}", f.note));
    }
    out
}
