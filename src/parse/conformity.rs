//! GATE 1: the conformity verifier's output.
//!
//! ```text
//! VERIFY — VERDICT: CONFORME | ECARTS(n) | ABANDONED(n) | ERROR(<reason>)
//! CONTRACT: <path>
//! CRITERIA:
//!   <id>. <text> — <MET|NOT-MET|UNVERIFIABLE|ABANDONED> — <detail>
//! SCOPE: in-scope <k> files; out-of-scope: none | <path>, <path>...
//! FLOOR: <text>
//! PROOF: <text>
//! ```
//!
//! Lines before the VERDICT line are the agent's preamble and are ignored;
//! after it every non-blank line belongs to a section. A criterion row is
//! split at its first ` — STATUS` (followed by a separator or the end of the
//! line), so the criterion text may itself contain ` — `. The verdict must
//! agree with the rows: `ECARTS(n)` counts NOT-MET and UNVERIFIABLE rows plus
//! out-of-scope files, `ABANDONED(n)` counts ABANDONED rows, and CONFORME needs
//! every row MET, no out-of-scope file, a FLOOR and a PROOF.

use std::sync::LazyLock;

use regex::Regex;

use super::GateOutput;
use super::body::{field, is_empty_list, list_header, once, skeleton};
use super::error::{Structural, StructuralKind};
use super::lines::Line;
use crate::model::{CriterionRow, CriterionStatus, GateName, GateRow, Scope, VerdictKind};
use crate::util::count;

/// Reads a GATE 1 output named `input`.
pub fn parse_conformity(input: &str, text: &[u8]) -> Result<GateOutput, Structural> {
    let sk = skeleton(input, GateName::Conformity, text)?;
    let mut reader = Reader {
        input,
        out: sk.output.clone(),
        row_lines: Vec::new(),
        seen: Seen::default(),
        in_criteria: false,
    };
    for line in sk.body() {
        if let Err(e) = reader.line(line) {
            return Err(e.with_partial(reader.out));
        }
    }
    let verdict_line = sk.verdict_line.number;
    match reader.check(verdict_line) {
        Ok(()) => Ok(reader.out),
        Err(e) => Err(e.with_partial(reader.out)),
    }
}

/// Header lines seen so far, by line number.
#[derive(Default)]
struct Seen {
    contract: Option<usize>,
    criteria: Option<usize>,
    scope: Option<usize>,
    floor: Option<usize>,
    proof: Option<usize>,
}

struct Reader<'i> {
    input: &'i str,
    out: GateOutput,
    /// Line number of each criterion row, parallel to `out.rows`.
    row_lines: Vec<usize>,
    seen: Seen,
    in_criteria: bool,
}

static ROW_START: LazyLock<Regex> =
    static_regex!(r"^[ \t]*([A-Za-z0-9][A-Za-z0-9_-]*)\.(?:[ \t]+|$)");

static STATUS: LazyLock<Regex> = static_regex!(
    r"[ \t]+(?:—|--)[ \t]+(NOT-MET|MET|UNVERIFIABLE|ABANDONED)(?:[ \t]+(?:—|--)(?:[ \t]+|$)|$)"
);

static SCOPE: LazyLock<Regex> =
    static_regex!(r"^in-scope[ \t]+([0-9]+)[ \t]+files?[ \t]*;[ \t]*out-of-scope:[ \t]*(.*)$");

const ROW_SHAPE: &str = "`<id>. <text> — <MET|NOT-MET|UNVERIFIABLE|ABANDONED> — <detail>`";

impl Reader<'_> {
    fn line(&mut self, line: &Line<'_>) -> Result<(), Structural> {
        if line.is_blank() {
            return Ok(());
        }
        let t = line.text;
        let input = self.input;
        if let Some(v) = field(t, "CONTRACT") {
            once(input, &mut self.seen.contract, line, "CONTRACT")?;
            self.out.contract = Some(v.to_owned());
        } else if let Some(v) = field(t, "CRITERIA") {
            once(input, &mut self.seen.criteria, line, "CRITERIA")?;
            list_header(input, line, "CRITERIA", v)?;
            self.in_criteria = true;
            return Ok(());
        } else if let Some(v) = field(t, "SCOPE") {
            once(input, &mut self.seen.scope, line, "SCOPE")?;
            self.out.scope = Some(self.scope(line, v)?);
        } else if let Some(v) = field(t, "FLOOR") {
            once(input, &mut self.seen.floor, line, "FLOOR")?;
            self.out.floor = Some(v.to_owned());
        } else if let Some(v) = field(t, "PROOF") {
            once(input, &mut self.seen.proof, line, "PROOF")?;
            self.out.proof = Some(v.to_owned());
        } else if self.in_criteria && (t.starts_with([' ', '\t']) || ROW_START.is_match(t)) {
            let row = self.row(line)?;
            self.out.rows.push(GateRow::Criterion(row));
            self.row_lines.push(line.number);
            return Ok(());
        } else {
            return Err(self.err(
                StructuralKind::UnknownLine,
                line,
                format!(
                    "`{t}` fits no section; expected CONTRACT:, CRITERIA:, a criterion row {ROW_SHAPE}, SCOPE:, FLOOR: or PROOF:"
                ),
            ));
        }
        self.in_criteria = false;
        Ok(())
    }

    fn row(&self, line: &Line<'_>) -> Result<CriterionRow, Structural> {
        let malformed = |what: String| {
            self.err(
                StructuralKind::MalformedRow,
                line,
                format!("malformed criterion row: {what}; expected {ROW_SHAPE}"),
            )
        };
        let Some(start) = ROW_START.captures(line.text) else {
            return Err(malformed("no `<id>.` at its start".to_owned()));
        };
        let (Some(id), Some(whole)) = (start.get(1), start.get(0)) else {
            return Err(malformed("no `<id>.` at its start".to_owned()));
        };
        // Search from just before the text so ` — STATUS` right after the
        // id is found even when the text is empty.
        let rest = line.text.get(whole.end()..).unwrap_or_default();
        let probe = format!(" {rest}");
        let Some(caps) = STATUS.captures(&probe) else {
            return Err(malformed(
                "no ` — <MET|NOT-MET|UNVERIFIABLE|ABANDONED>` status".to_owned(),
            ));
        };
        let (Some(sep), Some(status)) = (caps.get(0), caps.get(1)) else {
            return Err(malformed("no status".to_owned()));
        };
        let text = probe.get(..sep.start()).unwrap_or_default().trim();
        if text.is_empty() {
            return Err(malformed("empty criterion text".to_owned()));
        }
        let status = match status.as_str() {
            "MET" => CriterionStatus::Met,
            "NOT-MET" => CriterionStatus::NotMet,
            "UNVERIFIABLE" => CriterionStatus::Unverifiable,
            _ => CriterionStatus::Abandoned,
        };
        Ok(CriterionRow {
            id: id.as_str().to_owned(),
            text: text.to_owned(),
            status,
            detail: probe.get(sep.end()..).unwrap_or_default().trim().to_owned(),
        })
    }

    fn scope(&self, line: &Line<'_>, value: &str) -> Result<Scope, Structural> {
        let parsed = SCOPE.captures(value).and_then(|c| {
            let in_scope = c.get(1)?.as_str().parse().ok()?;
            let list = c.get(2)?.as_str().trim();
            let out_of_scope = if is_empty_list(list) {
                Vec::new()
            } else {
                list.split(',').map(|p| p.trim().to_owned()).collect()
            };
            Some(Scope {
                in_scope,
                out_of_scope,
            })
        });
        match parsed {
            Some(scope) if scope.out_of_scope.iter().all(|p| !p.is_empty()) => Ok(scope),
            _ => Err(self.err(
                StructuralKind::MalformedField,
                line,
                format!(
                    "malformed SCOPE `{value}`; expected `SCOPE: in-scope <k> files; out-of-scope: none | <path>, <path>...`"
                ),
            )),
        }
    }

    /// The verdict against the rows, once the body is read.
    fn check(&self, verdict_line: usize) -> Result<(), Structural> {
        let rows: Vec<(&CriterionRow, usize)> = self
            .out
            .rows
            .iter()
            .filter_map(|r| match r {
                GateRow::Criterion(c) => Some(c),
                _ => None,
            })
            .zip(self.row_lines.iter().copied())
            .collect();
        let n_of = |s: CriterionStatus| rows.iter().filter(|(r, _)| r.status == s).count();
        let out_of_scope = self
            .out
            .scope
            .as_ref()
            .map_or(&[][..], |s| &s.out_of_scope[..]);
        let verdict = &self.out.verdict;
        match verdict.kind {
            VerdictKind::Conforme => {
                self.need(
                    self.out.proof.as_deref(),
                    self.seen.proof,
                    "PROOF",
                    StructuralKind::ConformeWithoutProof,
                    verdict_line,
                )?;
                self.need(
                    self.out.floor.as_deref(),
                    self.seen.floor,
                    "FLOOR",
                    StructuralKind::ConformeWithoutFloor,
                    verdict_line,
                )?;
                if let Some((row, l)) = rows.iter().find(|(r, _)| r.status != CriterionStatus::Met)
                {
                    return Err(Structural::new(
                        self.input,
                        StructuralKind::ConformeNotClean,
                        Some(*l),
                        format!(
                            "CONFORME but criterion {} is {}; expected every criterion MET (or ECARTS/ABANDONED)",
                            row.id,
                            row.status.as_str()
                        ),
                    ));
                }
                if let Some(path) = out_of_scope.first() {
                    return Err(Structural::new(
                        self.input,
                        StructuralKind::ConformeNotClean,
                        self.seen.scope,
                        format!(
                            "CONFORME but `{path}` is out of scope; expected `out-of-scope: none` (or ECARTS)"
                        ),
                    ));
                }
            }
            VerdictKind::Ecarts => {
                let (not_met, unverifiable) = (
                    n_of(CriterionStatus::NotMet),
                    n_of(CriterionStatus::Unverifiable),
                );
                let gaps = not_met + unverifiable + out_of_scope.len();
                if verdict.n != u32::try_from(gaps).ok() || gaps == 0 {
                    return Err(Structural::new(
                        self.input,
                        StructuralKind::CountMismatch,
                        Some(verdict_line),
                        format!(
                            "{verdict} but the rows give {} ({not_met} NOT-MET, {unverifiable} UNVERIFIABLE, {}); expected ECARTS(n) with n the sum, at least 1",
                            count(gaps, "gap"),
                            count(out_of_scope.len(), "out-of-scope file")
                        ),
                    ));
                }
            }
            VerdictKind::Abandoned => {
                let abandoned = n_of(CriterionStatus::Abandoned);
                if verdict.n != u32::try_from(abandoned).ok() || abandoned == 0 {
                    return Err(Structural::new(
                        self.input,
                        StructuralKind::CountMismatch,
                        Some(verdict_line),
                        format!(
                            "{verdict} but the rows hold {}; expected ABANDONED(n) with n the number of ABANDONED rows, at least 1",
                            count(abandoned, "ABANDONED row")
                        ),
                    ));
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// CONFORME needs a non-empty `name:` line.
    fn need(
        &self,
        value: Option<&str>,
        seen: Option<usize>,
        name: &str,
        kind: StructuralKind,
        verdict_line: usize,
    ) -> Result<(), Structural> {
        match (value, seen) {
            (Some(v), _) if !v.is_empty() => Ok(()),
            (_, Some(l)) => Err(Structural::new(
                self.input,
                kind,
                Some(l),
                format!("CONFORME with an empty {name} line; expected `{name}: <text>`"),
            )),
            _ => Err(Structural::new(
                self.input,
                kind,
                Some(verdict_line),
                format!(
                    "CONFORME without a {name} line; expected `{name}: <text>` after the verdict"
                ),
            )),
        }
    }

    fn err(&self, kind: StructuralKind, line: &Line<'_>, message: String) -> Structural {
        Structural::new(self.input, kind, Some(line.number), message)
    }
}

#[cfg(test)]
#[path = "conformity_tests.rs"]
mod tests;
