//! GATE 2: the security auditor's output.
//!
//! ```text
//! SECURITY — VERDICT: PASS | BLOCK(n) | ERROR(<reason>) | DEGRADED
//! TOOL: <text>
//! SCOPE: <k> files
//! BLOCKING:
//!   <n>. [<SEVERITY>] <rule> — <file:line> — <why> — hint: <hint>
//! REPORTED (non-blocking):
//!   - [<SEVERITY>] <rule> — <file:line>
//! PROOF: <text>
//! ```
//!
//! Lines before the VERDICT line are ignored; after it every non-blank line
//! belongs to a section. A TOOL line containing `ABSENT` or `DEGRADED` (or a
//! bare `DEGRADED` verdict) marks the run degraded. `BLOCK(n)` must count the
//! BLOCKING rows; PASS and DEGRADED must have none. In a BLOCKING row the
//! `why` may contain ` — `: the hint starts at the last ` — hint:`.

use std::sync::LazyLock;

use regex::Regex;

use super::GateOutput;
use super::body::{field, list_header, once, skeleton};
use super::error::{Structural, StructuralKind};
use super::lines::{Line, split_once_sep};
use crate::model::{GateName, GateRow, ReportedRow, Scope, SecurityRow, VerdictKind};
use crate::util::count;

/// Reads a GATE 2 output named `input`.
pub fn parse_security(input: &str, text: &[u8]) -> Result<GateOutput, Structural> {
    let sk = skeleton(input, GateName::Security, text)?;
    let mut reader = Reader {
        input,
        out: sk.output.clone(),
        seen: Seen::default(),
        section: Section::None,
    };
    reader.out.degraded = reader.out.verdict.kind == VerdictKind::Degraded;
    for line in sk.body() {
        if let Err(e) = reader.line(line) {
            return Err(e.with_partial(reader.out));
        }
    }
    match reader.check(sk.verdict_line.number) {
        Ok(()) => Ok(reader.out),
        Err(e) => Err(e.with_partial(reader.out)),
    }
}

#[derive(Default)]
struct Seen {
    tool: Option<usize>,
    scope: Option<usize>,
    blocking: Option<usize>,
    reported: Option<usize>,
    proof: Option<usize>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    None,
    Blocking,
    Reported,
}

struct Reader<'i> {
    input: &'i str,
    out: GateOutput,
    seen: Seen,
    section: Section,
}

static BLOCKING_ROW: LazyLock<Regex> =
    static_regex!(r"^[ \t]*([0-9]+)\.[ \t]+\[([^\]]*)\][ \t]*(.*)$");

static REPORTED_ROW: LazyLock<Regex> = static_regex!(r"^[ \t]*[-*][ \t]+\[([^\]]*)\][ \t]*(.*)$");

static REPORTED_HEADER: LazyLock<Regex> =
    static_regex!(r"^REPORTED(?:[ \t]*\(non-blocking\))?:[ \t]*(.*)$");

static HINT: LazyLock<Regex> = static_regex!(r"[ \t]+(?:—|--)[ \t]+hint:[ \t]*");

static SCOPE: LazyLock<Regex> = static_regex!(r"^([0-9]+)[ \t]+files?$");

const BLOCKING_SHAPE: &str = "`<n>. [<SEVERITY>] <rule> — <file:line> — <why> — hint: <hint>`";
const REPORTED_SHAPE: &str = "`- [<SEVERITY>] <rule> — <file:line>`";

impl Reader<'_> {
    fn line(&mut self, line: &Line<'_>) -> Result<(), Structural> {
        if line.is_blank() {
            return Ok(());
        }
        let t = line.text;
        let input = self.input;
        if let Some(v) = field(t, "TOOL") {
            once(input, &mut self.seen.tool, line, "TOOL")?;
            self.out.degraded |= v.contains("ABSENT") || v.contains("DEGRADED");
            self.out.tool = Some(v.to_owned());
        } else if let Some(v) = field(t, "SCOPE") {
            once(input, &mut self.seen.scope, line, "SCOPE")?;
            self.out.scope = Some(self.scope(line, v)?);
        } else if let Some(v) = field(t, "BLOCKING") {
            once(input, &mut self.seen.blocking, line, "BLOCKING")?;
            list_header(input, line, "BLOCKING", v)?;
            self.section = Section::Blocking;
            return Ok(());
        } else if let Some(caps) = REPORTED_HEADER.captures(t) {
            once(
                input,
                &mut self.seen.reported,
                line,
                "REPORTED (non-blocking)",
            )?;
            let v = caps.get(1).map_or("", |m| m.as_str());
            list_header(input, line, "REPORTED (non-blocking)", v)?;
            self.section = Section::Reported;
            return Ok(());
        } else if let Some(v) = field(t, "PROOF") {
            once(input, &mut self.seen.proof, line, "PROOF")?;
            self.out.proof = Some(v.to_owned());
        } else if self.section == Section::Blocking && is_row(t) {
            let row = self.blocking_row(line)?;
            self.out.rows.push(GateRow::Security(row));
            return Ok(());
        } else if self.section == Section::Reported && is_row(t) {
            let row = self.reported_row(line)?;
            self.out.reported.push(row);
            return Ok(());
        } else {
            return Err(self.err(
                StructuralKind::UnknownLine,
                line,
                format!(
                    "`{t}` fits no section; expected TOOL:, SCOPE:, BLOCKING: with rows {BLOCKING_SHAPE}, REPORTED (non-blocking): with rows {REPORTED_SHAPE}, or PROOF:"
                ),
            ));
        }
        self.section = Section::None;
        Ok(())
    }

    fn blocking_row(&self, line: &Line<'_>) -> Result<SecurityRow, Structural> {
        let malformed = |what: &str| {
            self.err(
                StructuralKind::MalformedRow,
                line,
                format!("malformed BLOCKING row: {what}; expected {BLOCKING_SHAPE}"),
            )
        };
        let caps = BLOCKING_ROW
            .captures(line.text)
            .ok_or_else(|| malformed("no `<n>. [<SEVERITY>]` at its start"))?;
        let n = caps
            .get(1)
            .and_then(|m| m.as_str().parse().ok())
            .ok_or_else(|| malformed("row number out of range"))?;
        let severity = caps.get(2).map_or("", |m| m.as_str().trim());
        let rest = caps.get(3).map_or("", |m| m.as_str());
        let (rule, after) =
            split_once_sep(rest).ok_or_else(|| malformed("no ` — ` after the rule"))?;
        let (location, tail) = split_once_sep(after).unwrap_or((after, ""));
        let (why, hint) = match HINT.find_iter(tail).last() {
            Some(m) => (tail.get(..m.start()), tail.get(m.end()..)),
            None => match tail.strip_prefix("hint:") {
                Some(h) => (Some(""), Some(h)),
                None => (Some(tail), Some("")),
            },
        };
        let row = SecurityRow {
            n,
            severity: severity.to_owned(),
            rule: rule.trim().to_owned(),
            location: location.trim().to_owned(),
            why: why.unwrap_or_default().trim().to_owned(),
            hint: hint.unwrap_or_default().trim().to_owned(),
        };
        if row.severity.is_empty() || row.rule.is_empty() || row.location.is_empty() {
            return Err(malformed("empty severity, rule or location"));
        }
        Ok(row)
    }

    fn reported_row(&self, line: &Line<'_>) -> Result<ReportedRow, Structural> {
        let malformed = |what: &str| {
            self.err(
                StructuralKind::MalformedRow,
                line,
                format!("malformed REPORTED row: {what}; expected {REPORTED_SHAPE}"),
            )
        };
        let caps = REPORTED_ROW
            .captures(line.text)
            .ok_or_else(|| malformed("no `- [<SEVERITY>]` at its start"))?;
        let severity = caps.get(1).map_or("", |m| m.as_str().trim());
        let rest = caps.get(2).map_or("", |m| m.as_str());
        let (rule, location) =
            split_once_sep(rest).ok_or_else(|| malformed("no ` — ` after the rule"))?;
        if split_once_sep(location).is_some() {
            return Err(malformed("more than two fields"));
        }
        let row = ReportedRow {
            severity: severity.to_owned(),
            rule: rule.trim().to_owned(),
            location: location.trim().to_owned(),
        };
        if row.severity.is_empty() || row.rule.is_empty() || row.location.is_empty() {
            return Err(malformed("empty severity, rule or location"));
        }
        Ok(row)
    }

    fn scope(&self, line: &Line<'_>, value: &str) -> Result<Scope, Structural> {
        SCOPE
            .captures(value)
            .and_then(|c| c.get(1)?.as_str().parse().ok())
            .map(|in_scope| Scope {
                in_scope,
                out_of_scope: Vec::new(),
            })
            .ok_or_else(|| {
                self.err(
                    StructuralKind::MalformedField,
                    line,
                    format!("malformed SCOPE `{value}`; expected `SCOPE: <k> files`"),
                )
            })
    }

    /// The verdict against the BLOCKING rows.
    fn check(&self, verdict_line: usize) -> Result<(), Structural> {
        let blocking = self.out.rows.len();
        let verdict = &self.out.verdict;
        let wrong = match verdict.kind {
            VerdictKind::Block => verdict.n != u32::try_from(blocking).ok() || blocking == 0,
            VerdictKind::Pass | VerdictKind::Degraded => blocking > 0,
            _ => false,
        };
        if !wrong {
            return Ok(());
        }
        let (kind, expected) = if verdict.kind == VerdictKind::Block {
            (
                StructuralKind::CountMismatch,
                "BLOCK(n) with n the number of BLOCKING rows, at least 1",
            )
        } else {
            (
                StructuralKind::PassWithBlocking,
                "no BLOCKING row (or BLOCK(n))",
            )
        };
        Err(Structural::new(
            self.input,
            kind,
            Some(verdict_line),
            format!(
                "{verdict} with {}; expected {expected}",
                count(blocking, "BLOCKING row")
            ),
        ))
    }

    fn err(&self, kind: StructuralKind, line: &Line<'_>, message: String) -> Structural {
        Structural::new(self.input, kind, Some(line.number), message)
    }
}

/// True when a line inside a list section should be read as a row.
fn is_row(text: &str) -> bool {
    text.starts_with([' ', '\t', '-', '*']) || text.starts_with(|c: char| c.is_ascii_digit())
}

#[cfg(test)]
#[path = "security_tests.rs"]
mod tests;
