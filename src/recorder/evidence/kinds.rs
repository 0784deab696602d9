//! The evidence of the gates that carry no code hunk: an abandonment's
//! criterion and ABANDON line read from the contract, a cap's rows over
//! every round of its gate, a structurally broken output with its failing
//! line marked, the end of a failed agent's log. Raw text, as lines;
//! whoever shows it sanitises it.

use std::path::Path;

use super::code::bounded;
use crate::model::event::GateFinished;
use crate::model::rules::{RoundOutcome, round_outcome};
use crate::model::{CriterionStatus, FloorState, GateName};

/// Most lines of a criterion's block shown from the contract.
pub const MAX_CRITERION_LINES: usize = 12;

/// Lines of a broken output shown before its failing line.
pub const OUTPUT_BEFORE: usize = 15;

/// Lines of a broken output shown in all.
pub const OUTPUT_LINES: usize = 40;

/// The last [`OUTPUT_LINES`] lines of an agent's log (where a failure
/// shows), each as `  | text`, after a line saying what came before. `raw`
/// is the log's end; `whole` says whether it is the whole log (if not, its
/// first line may be cut and is left out).
pub fn log_tail(raw: &[u8], whole: bool) -> Vec<String> {
    let text = String::from_utf8_lossy(raw);
    let mut lines: Vec<&str> = text.lines().collect();
    if !whole && !lines.is_empty() {
        lines.remove(0);
    }
    if lines.is_empty() {
        return vec!["(the log is empty)".into()];
    }
    let shown = lines.len().saturating_sub(OUTPUT_LINES);
    let mut out = Vec::new();
    if !whole {
        out.push("(the log's earlier lines are not shown)".into());
    } else if shown > 0 {
        out.push(format!("({shown} lines before)"));
    }
    out.extend(lines[shown..].iter().map(|l| bounded(format!("  | {l}"))));
    out
}

/// Criterion `id` of the contract at `path` (relative to `worktree`, as
/// the run recorded it), its ABANDON lines and their proof, as lines:
/// `contract.md`, then `   12 | 4. text` for the criterion and its
/// attributes, `>  20 | ABANDON: 4 reason` for each ABANDON line, then
/// `proof: reason`. What cannot be read is said.
pub fn abandonment(worktree: &Path, contract: Option<&str>, id: &str) -> Vec<String> {
    contract_lines(worktree, contract, id)
        .into_iter()
        .map(bounded)
        .collect()
}

fn contract_lines(worktree: &Path, contract: Option<&str>, id: &str) -> Vec<String> {
    let Some(recorded) = contract.filter(|c| !c.is_empty()) else {
        return vec!["contract: none recorded for the run (no ABANDON line to show)".into()];
    };
    let path = match crate::recorder::contract_path(worktree, recorded) {
        Ok(p) => p,
        Err(e) => return vec![format!("contract {recorded}: {e}")],
    };
    let bytes = match crate::util::read_regular(&path, crate::util::MAX_TEXT_BYTES) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return vec![format!("contract {recorded}: no longer exists")];
        }
        Err(e) => return vec![format!("contract {recorded}: cannot be read: {e}")],
    };
    let parsed = crate::gate0::parse(&bytes);
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    let numbered = |n: usize, mark: char| {
        let t = lines.get(n.wrapping_sub(1)).copied().unwrap_or("");
        format!("{mark}{n:>5} | {t}")
    };
    let mut out = vec![format!("contract {recorded}:")];
    match parsed.criteria.iter().find(|c| c.id == id) {
        Some(c) => {
            out.push(numbered(c.line, ' '));
            // Its attributes and continuation: the indented lines after it.
            let mut n = c.line + 1;
            while n <= lines.len()
                && n < c.line + MAX_CRITERION_LINES
                && lines[n - 1].starts_with([' ', '\t'])
            {
                out.push(numbered(n, ' '));
                n += 1;
            }
        }
        None => out.push(format!("(the contract has no criterion {id})")),
    }
    let abandons: Vec<_> = parsed.abandons.iter().filter(|a| a.id == id).collect();
    if abandons.is_empty() {
        out.push(format!(
            "(the contract has no ABANDON line for criterion {id})"
        ));
    }
    for a in &abandons {
        out.push(numbered(a.line, '>'));
    }
    for a in &abandons {
        out.push(format!(
            "proof: {}",
            String::from_utf8_lossy(&a.reason).trim()
        ));
    }
    out
}

/// The rows of every round of a gate, round by round: a heading per round
/// (`round 2 · iteration 1 · UNMET(1)`), then its gaps: NOT-MET rows for
/// GATE 0, the criteria that are not MET and the out-of-scope files for
/// GATE 1, the BLOCKING table for GATE 2; a structural round says why.
pub fn rounds<'a>(gate: GateName, all: impl IntoIterator<Item = &'a GateFinished>) -> Vec<String> {
    let mut out = Vec::new();
    for g in all.into_iter().filter(|g| g.gate == gate) {
        out.push(format!(
            "round {} · iteration {} · {}",
            g.round, g.iteration, g.verdict
        ));
        let before = out.len();
        if round_outcome(g) == RoundOutcome::Structural {
            let why = g
                .structural
                .clone()
                .unwrap_or_else(|| g.verdict.to_string());
            out.push(format!("  structural: {why}"));
            continue;
        }
        match gate {
            GateName::Floor => out.extend(
                g.floor_rows()
                    .filter(|r| r.state == FloorState::NotMet)
                    .map(|r| {
                        let mut l = format!("  {} NOT-MET: {}", r.id, r.text);
                        if !r.evidence.is_empty() {
                            l.push_str(&format!(" — {}", r.evidence));
                        }
                        l
                    }),
            ),
            GateName::Conformity => {
                out.extend(
                    g.criterion_rows()
                        .filter(|r| r.status != CriterionStatus::Met)
                        .map(|r| {
                            let mut l = format!("  {} {}: {}", r.id, r.status.as_str(), r.text);
                            if !r.detail.is_empty() {
                                l.push_str(&format!(" — {}", r.detail));
                            }
                            l
                        }),
                );
                out.extend(
                    g.out_of_scope()
                        .iter()
                        .map(|p| format!("  out of scope: {p}")),
                );
            }
            GateName::Security => out.extend(g.security_rows().map(|r| {
                let mut l = format!(
                    "  BLOCKING {} {} {} {}: {}",
                    r.n, r.severity, r.rule, r.location, r.why
                );
                if !r.hint.is_empty() {
                    l.push_str(&format!(" (hint: {})", r.hint));
                }
                l
            })),
        }
        if out.len() == before {
            out.push("  (no gap rows in this round)".into());
        }
    }
    out.into_iter().map(bounded).collect()
}

/// The output of a structurally broken round with its failing line
/// marked `>`: [`OUTPUT_LINES`] numbered lines around it (from the start
/// when no line is to blame), and what is left out said.
pub fn marked_output(raw: &[u8], failing: Option<usize>) -> Vec<String> {
    let text = String::from_utf8_lossy(raw);
    let lines: Vec<&str> = text.lines().collect();
    if lines.is_empty() {
        return vec!["(the output is empty)".into()];
    }
    let first = failing
        .filter(|l| *l >= 1)
        .map_or(1, |l| l.saturating_sub(OUTPUT_BEFORE).max(1));
    let last = (first + OUTPUT_LINES - 1).min(lines.len());
    let mut out = Vec::new();
    if first > 1 {
        out.push(format!("({} lines before)", first - 1));
    }
    for n in first..=last {
        let mark = if Some(n) == failing { '>' } else { ' ' };
        out.push(bounded(format!("{mark}{n:>5} | {}", lines[n - 1])));
    }
    if last < lines.len() {
        out.push(format!("({} lines after)", lines.len() - last));
    }
    if let Some(l) = failing
        && l > lines.len()
    {
        out.push(format!(
            "(line {l} is past the output's end: {} lines)",
            lines.len()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_failing_line_is_marked_in_a_window_around_it() {
        let raw: String = (1..=100).map(|i| format!("l{i}\n")).collect();
        let out = marked_output(raw.as_bytes(), Some(60));
        assert_eq!(out[0], "(44 lines before)");
        assert!(out.contains(&">   60 | l60".to_string()), "{out:#?}");
        assert!(out.contains(&"    59 | l59".to_string()));
        assert_eq!(out.last().map(String::as_str), Some("(16 lines after)"));
        assert_eq!(out.len(), 42);
        // A runaway line is kept bounded.
        let huge = "x".repeat(1 << 20);
        let cut = marked_output(huge.as_bytes(), Some(1));
        assert!(
            cut[0].starts_with(">    1 | xxx") && cut[0].len() < 2100,
            "{}",
            cut[0].len()
        );
        let head = marked_output(b"a\nb\n", None);
        assert_eq!(head, ["     1 | a", "     2 | b"]);
        let past = marked_output(b"a\n", Some(9));
        assert_eq!(
            past.last().map(String::as_str),
            Some("(line 9 is past the output's end: 1 lines)")
        );
        assert_eq!(marked_output(b"", Some(1)), ["(the output is empty)"]);
    }

    #[test]
    fn a_log_shows_its_last_lines_and_says_what_came_before() {
        let raw: String = (1..=100).map(|i| format!("l{i}\n")).collect();
        let out = log_tail(raw.as_bytes(), true);
        assert_eq!(out[0], "(60 lines before)");
        assert_eq!(out[1], "  | l61");
        assert_eq!(out.last().map(String::as_str), Some("  | l100"));
        assert_eq!(out.len(), 41);
        assert_eq!(log_tail(b"oops\n", true), ["  | oops"]);
        // The end of a longer log: its first line may be cut, so it goes.
        assert_eq!(
            log_tail(b"ut line\nwhole\n", false),
            ["(the log's earlier lines are not shown)", "  | whole"]
        );
        assert_eq!(log_tail(b"", true), ["(the log is empty)"]);
        assert_eq!(log_tail(b"cut", false), ["(the log is empty)"]);
        // A runaway line is kept bounded; invalid UTF-8 is shown replaced.
        let huge = "y".repeat(1 << 20);
        let cut = log_tail(huge.as_bytes(), true);
        assert!(cut[0].starts_with("  | yyy") && cut[0].len() < 2100);
        assert_eq!(log_tail(b"a\xffb\n", true), ["  | a\u{fffd}b"]);
    }
}
