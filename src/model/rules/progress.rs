//! Progress per round: the failing rows of a gate's rounds (UNMET floor
//! criteria, NOT-MET criteria, BLOCKING rows) and of the review rounds
//! that sent work back (their blocking findings), what each round fixed and
//! what came new, the convergence line (`GATE 1: 5 → 2 → 2 NOT-MET`), and
//! whether a round made progress over the one before it.
//!
//! A round made no progress when the developer's dispatch left the code's
//! tree as it was (the same snapshot), or when the same failing rows came
//! back and none of the files they cite changed; how the code changed is
//! the engine's to find out (git), the judgement is here.

use serde::Serialize;

use crate::model::event::GateFinished;
use crate::model::state::{Iteration, State};
use crate::model::types::{CriterionStatus, FloorState, GateName};

use super::{RoundOutcome, round_outcome};

/// One failing row of a round, by its stable key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailingRow {
    /// `criterion 1`, or `eval-injection src/a.rs` for a BLOCKING row
    /// (its rule and its file: a line that moved is the same row).
    pub key: String,
    /// The row in one line, as the gate wrote it.
    pub text: String,
}

/// The failing rows of a round.
pub fn failing_rows(g: &GateFinished) -> Vec<FailingRow> {
    match g.gate {
        GateName::Floor => g
            .floor_rows()
            .filter(|r| r.state == FloorState::NotMet)
            .map(|r| FailingRow {
                key: format!("criterion {}", r.id),
                text: super::one_line(&format!("{}. {} — UNMET", r.id, r.text)),
            })
            .collect(),
        GateName::Conformity => g
            .criterion_rows()
            .filter(|r| r.status == CriterionStatus::NotMet)
            .map(|r| FailingRow {
                key: format!("criterion {}", r.id),
                text: super::one_line(&format!("{}. {} — NOT-MET — {}", r.id, r.text, r.detail)),
            })
            .collect(),
        GateName::Security => g
            .security_rows()
            .map(|r| {
                let file = r.location.split(':').next().unwrap_or_default();
                FailingRow {
                    key: format!("{} {file}", r.rule),
                    text: super::one_line(&format!(
                        "[{}] {} — {} — {}",
                        r.severity, r.rule, r.location, r.why
                    )),
                }
            })
            .collect(),
    }
}

/// The review rounds that sent work back to the developer, in order.
pub fn review_rounds_sent_back(s: &State) -> Vec<&Iteration> {
    s.review_iterations
        .iter()
        .filter(|it| {
            it.review
                .as_ref()
                .and_then(|p| p.finished.as_ref())
                .is_some_and(|f| f.gaps > 0)
        })
        .map(AsRef::as_ref)
        .collect()
}

/// The failing rows of a review round: the findings it sent back to the
/// developer (accepted blocking ones, those a person asked to be fixed),
/// keyed by their claim and file (the ids are the reviewer's own and
/// change from one review to the next; a line that moved is the same row).
pub fn review_failing_rows(it: &Iteration) -> Vec<FailingRow> {
    sent_back(it)
        .map(|x| FailingRow {
            key: format!("{} {}", super::one_line(&x.claim), x.path),
            text: super::one_line(&format!(
                "{} [{}] {}:{} — {}",
                x.id, x.severity, x.path, x.lines, x.claim
            )),
        })
        .collect()
}

/// The findings a review round sent back to the developer.
fn sent_back(it: &Iteration) -> impl Iterator<Item = &crate::model::Finding> {
    super::review::sent_back_ids(it)
        .into_iter()
        .filter_map(|id| it.findings.iter().find(|x| x.id == id))
}

/// The files a review round's failing rows cite: their findings' paths.
pub fn review_cited_files(it: &Iteration) -> Vec<String> {
    let mut out: Vec<String> = sent_back(it)
        .map(|x| x.path.clone())
        .filter(|p| !p.is_empty())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// One round of a gate on the convergence line.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoundRows {
    /// Iteration.
    pub iteration: u32,
    /// Round of the gate.
    pub round: u32,
    /// Its verdict, as written (`NOT-MET`, `ECARTS(2)`, `BLOCK(1)`).
    pub verdict: String,
    /// The keys of its failing rows.
    pub failing: Vec<String>,
    /// Keys failing in the round before, not in this one.
    pub fixed: Vec<String>,
    /// Keys failing in this round, not in the round before.
    pub new: Vec<String>,
    /// Dollars its dispatches reported (the developer's of its iteration
    /// and the gate's own), with those that reported none.
    pub usd: f64,
    /// Its dispatches that reported no cost.
    pub unpriced: u32,
    /// Its dispatches counted.
    pub dispatches: u32,
}

impl RoundRows {
    /// `$0.1200` (`+?` when some dispatch reported no cost; `$?` when none
    /// did; `no agent` when no agent was dispatched for it).
    pub fn spend(&self) -> String {
        if self.dispatches == 0 {
            return "no agent".into();
        }
        crate::model::budget::Spent {
            usd: self.usd,
            unpriced: self.unpriced,
            ..Default::default()
        }
        .usd_text()
    }
}

/// A gate's rounds, or the review stage's, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateRounds {
    /// The gate (`None`: the review rounds, written `"review"`).
    #[serde(serialize_with = "gate_or_review")]
    pub gate: Option<GateName>,
    /// Its rounds (structural ones left out: they judged nothing).
    pub rounds: Vec<RoundRows>,
}

/// The gate's name, or `review` for the review rounds.
fn gate_or_review<S: serde::Serializer>(g: &Option<GateName>, s: S) -> Result<S::Ok, S::Error> {
    match g {
        Some(g) => g.serialize(s),
        None => s.serialize_str("review"),
    }
}

impl GateRounds {
    /// `GATE 1: 5 → 2 → 2 NOT-MET`, `REVIEW: 1 → 1 → 0 clean` (the
    /// failing rows per round, then the last verdict).
    pub fn line(&self) -> String {
        let counts: Vec<String> = self
            .rounds
            .iter()
            .map(|r| r.failing.len().to_string())
            .collect();
        let last = self.rounds.last().map_or("", |r| r.verdict.as_str());
        let name = match self.gate {
            Some(g) => format!("GATE {}", g.number()),
            None => "REVIEW".to_string(),
        };
        format!("{name}: {} {last}", counts.join(" → "))
    }

    /// The line, then per round the rows fixed and new and the spend, on
    /// one line: `GATE 1: 5 → 2 → 2 NOT-MET · fixed 3 → 0 · new 0 → 0 ·
    /// spend $0.1200 → $? → $0.0800` (the first round fixes nothing).
    pub fn summary(&self) -> String {
        let later = self.rounds.iter().skip(1);
        let fixed: Vec<String> = later.clone().map(|r| r.fixed.len().to_string()).collect();
        let new: Vec<String> = later.map(|r| r.new.len().to_string()).collect();
        let spend: Vec<String> = self.rounds.iter().map(RoundRows::spend).collect();
        let mut out = self.line();
        if !fixed.is_empty() {
            out.push_str(&format!(
                " · fixed {} · new {}",
                fixed.join(" → "),
                new.join(" → ")
            ));
        }
        out.push_str(&format!(" · spend {}", spend.join(" → ")));
        out
    }

    /// One line per round: `round 2 (iter 2): 2 failing · fixed criterion 1
    /// · new criterion 3 · $0.1200`.
    pub fn round_lines(&self) -> Vec<String> {
        self.rounds
            .iter()
            .map(|r| {
                let mut l = format!(
                    "round {} (iter {}): {} failing",
                    r.round,
                    r.iteration,
                    r.failing.len()
                );
                if !r.fixed.is_empty() {
                    l.push_str(&format!(" · fixed {}", r.fixed.join(", ")));
                }
                if !r.new.is_empty() && r.round > 1 {
                    l.push_str(&format!(" · new {}", r.new.join(", ")));
                }
                l.push_str(&format!(" · {}", r.spend()));
                l
            })
            .collect()
    }
}

/// Every gate that ran, with its rounds' failing rows, fixed and new rows,
/// and spend; the review rounds after GATE 1 when a review finished.
pub fn convergence(s: &State) -> Vec<GateRounds> {
    let mut out: Vec<GateRounds> = Vec::new();
    for &gate in GateName::ALL {
        if gate == GateName::Security
            && let Some(r) = review_convergence(s)
        {
            out.push(r);
        }
        let mut rounds: Vec<RoundRows> = Vec::new();
        for it in &s.review_iterations {
            for g in it.gates.iter().filter(|g| g.gate == gate) {
                if round_outcome(g) == RoundOutcome::Structural {
                    continue;
                }
                let failing: Vec<String> = failing_rows(g).into_iter().map(|r| r.key).collect();
                let spent = s.agents.iter().filter(|d| {
                    d.started.iteration == g.iteration
                        && (d.started.gate == Some(gate) && d.started.round == Some(g.round)
                            || d.started.gate.is_none()
                                && d.started.role == crate::model::event::AgentRole::Developer
                                && gate == GateName::Floor)
                });
                let row = round_rows(
                    (g.iteration, g.round, g.verdict.to_string()),
                    failing,
                    rounds.last(),
                    spent,
                );
                rounds.push(row);
            }
        }
        if !rounds.is_empty() {
            out.push(GateRounds {
                gate: Some(gate),
                rounds,
            });
        }
    }
    out
}

/// One round on the convergence line: `(iteration, round, verdict)`, its
/// failing keys, the round before (for the rows fixed and new), and the
/// dispatches whose spend is its own.
fn round_rows<'a>(
    (iteration, round, verdict): (u32, u32, String),
    failing: Vec<String>,
    before: Option<&RoundRows>,
    spent: impl Iterator<Item = &'a crate::model::state::AgentDispatch>,
) -> RoundRows {
    let before: &[String] = before.map_or(&[], |r| r.failing.as_slice());
    let mut usage = crate::model::state::Usage::default();
    spent
        .filter_map(|d| d.finished.as_ref())
        .for_each(|f| usage.add(f));
    RoundRows {
        iteration,
        round,
        verdict,
        fixed: before
            .iter()
            .filter(|k| !failing.contains(k))
            .cloned()
            .collect(),
        new: failing
            .iter()
            .filter(|k| !before.contains(k))
            .cloned()
            .collect(),
        failing,
        usd: usage.cost_usd.unwrap_or(0.0),
        unpriced: usage.unpriced,
        dispatches: usage.dispatches,
    }
}

/// The review rounds (every finished review, clean or not): the findings
/// each sent back, and the spend of the review stage's dispatches of its
/// iteration.
fn review_convergence(s: &State) -> Option<GateRounds> {
    use crate::model::event::AgentRole;
    let mut rounds: Vec<RoundRows> = Vec::new();
    for it in &s.review_iterations {
        let Some(f) = it.review.as_ref().and_then(|p| p.finished.as_ref()) else {
            continue;
        };
        let failing: Vec<String> = review_failing_rows(it).into_iter().map(|r| r.key).collect();
        let spent = s.agents.iter().filter(|d| {
            d.started.iteration == it.iteration
                && d.started.gate.is_none()
                && matches!(
                    d.started.role,
                    AgentRole::Reviewer
                        | AgentRole::FindingVerifier
                        | AgentRole::Triage
                        | AgentRole::VerifyByTest
                )
        });
        let verdict = if f.gaps == 0 {
            "clean".to_string()
        } else {
            format!("{} gap(s)", f.gaps)
        };
        let row = round_rows(
            (it.iteration, f.round, verdict),
            failing,
            rounds.last(),
            spent,
        );
        rounds.push(row);
    }
    (!rounds.is_empty()).then_some(GateRounds { gate: None, rounds })
}

/// How the code changed between two rounds, as the engine found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeMove {
    /// The two snapshots are the same tree (or differ only in the
    /// contract, which is not the developer's work).
    Same,
    /// These files changed.
    Files(Vec<String>),
    /// Unknown (a snapshot is missing, git failed): progress is assumed.
    Unknown,
}

/// Why `cur` made no progress over `prev` (its failing rows were `prev`'s
/// and `cur`'s; `cites` the files `cur`'s rows cite), or `None` when it
/// made some. Rows that cite no file are judged by the tree alone.
pub fn no_progress(
    prev: &[FailingRow],
    cur: &[FailingRow],
    code: &CodeMove,
    cites: &[String],
) -> Option<String> {
    match code {
        CodeMove::Same => Some("the developer's dispatch left the code's tree unchanged".into()),
        CodeMove::Unknown => None,
        CodeMove::Files(changed) => {
            let mut a: Vec<&str> = prev.iter().map(|r| r.key.as_str()).collect();
            let mut b: Vec<&str> = cur.iter().map(|r| r.key.as_str()).collect();
            a.sort_unstable();
            b.sort_unstable();
            // Rows that cite no file cannot say the changes missed them.
            let touched = cites.is_empty() || cites.iter().any(|c| changed.iter().any(|f| f == c));
            (!b.is_empty() && a == b && !touched).then(|| {
                format!(
                    "the same {} failing row(s) came back and none of the files they cite changed",
                    b.len()
                )
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::test_journal::state;

    fn row(key: &str) -> FailingRow {
        FailingRow {
            key: key.into(),
            text: key.into(),
        }
    }

    #[test]
    fn no_progress_is_an_unchanged_tree_or_the_same_rows_on_unchanged_files() {
        let a = [row("criterion 1"), row("criterion 2")];
        let b = [row("criterion 2"), row("criterion 1")];
        assert!(no_progress(&a, &b, &CodeMove::Same, &[]).is_some());
        assert_eq!(no_progress(&a, &b, &CodeMove::Unknown, &[]), None);
        let moved = CodeMove::Files(vec!["src/a.rs".into()]);
        assert!(no_progress(&a, &b, &moved, &["src/b.rs".into()]).is_some());
        assert_eq!(no_progress(&a, &b, &moved, &["src/a.rs".into()]), None);
        assert_eq!(no_progress(&a, &a[..1], &moved, &["src/b.rs".into()]), None);
        // Rows citing no file: a changed tree may be progress.
        assert_eq!(no_progress(&a, &b, &moved, &[]), None);
    }

    #[test]
    fn a_review_round_fails_on_the_findings_it_sent_back_keyed_by_claim_and_file() {
        let review = |it: u32, id: &str, lines: &str| {
            vec![
                format!(r#"{{"type":"iteration.started","iteration":{it},"trigger":"review"}}"#),
                format!(
                    r#"{{"type":"findings.verified","iteration":{it},"findings":[{{"id":"{id}","severity":"blocking","path":"src/a.rs","lines":"{lines}","claim":"the total  drops cents","verdict":"VERIFIED","evidence":"e","note":""}},{{"id":"N1","severity":"minor","path":"src/b.rs","lines":"1","claim":"a nit","verdict":"VERIFIED","evidence":"e","note":""}}]}}"#
                ),
                format!(
                    r#"{{"type":"review.finished","iteration":{it},"round":{it},"blocking":["{id}"],"gaps":1}}"#
                ),
            ]
        };
        let mut lines = vec![
            r#"{"type":"run.started","run":{"id":"r","engine":true,"review":{"verifyByTest":false}}}"#
                .to_string(),
        ];
        lines.extend(review(1, "F1", "3"));
        lines.extend(review(2, "F7", "9"));
        let s = state(&lines);
        let rounds = review_rounds_sent_back(&s);
        assert_eq!(rounds.len(), 2);
        let (a, b) = (
            review_failing_rows(rounds[0]),
            review_failing_rows(rounds[1]),
        );
        // Another id, another line: the same row.
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].key, "the total drops cents src/a.rs");
        assert_eq!(a[0].key, b[0].key);
        assert_eq!(
            b[0].text,
            "F7 [blocking] src/a.rs:9 — the total drops cents"
        );
        assert_eq!(review_cited_files(rounds[1]), ["src/a.rs"]);
        let line = convergence(&s).pop().unwrap();
        assert_eq!(line.gate, None);
        assert_eq!(line.line(), "REVIEW: 1 → 1 1 gap(s)");
        assert_eq!(
            serde_json::to_value(&line).unwrap()["gate"],
            serde_json::json!("review")
        );
        let elsewhere = CodeMove::Files(vec!["src/b.rs".into()]);
        assert!(no_progress(&a, &b, &elsewhere, &review_cited_files(rounds[1])).is_some());
        let there = CodeMove::Files(vec!["src/a.rs".into()]);
        assert_eq!(
            no_progress(&a, &b, &there, &review_cited_files(rounds[1])),
            None
        );
    }

    #[test]
    fn the_convergence_line_counts_the_failing_rows_per_round() {
        let floor = |it: u32, states: &[&str]| {
            let rows: Vec<String> = states
                .iter()
                .enumerate()
                .map(|(i, st)| {
                    format!(r#"{{"id":"{}","state":"{st}","text":"c{}"}}"#, i + 1, i + 1)
                })
                .collect();
            let unmet = states.iter().filter(|s| **s == "NOT-MET").count();
            let verdict = if unmet == 0 {
                r#"{"kind":"MET"}"#.to_string()
            } else {
                format!(r#"{{"kind":"UNMET","n":{unmet}}}"#)
            };
            vec![
                format!(
                    r#"{{"type":"gate.started","gate":"floor","iteration":{it},"round":{it}}}"#
                ),
                format!(
                    r#"{{"type":"gate.finished","gate":"floor","iteration":{it},"round":{it},"verdict":{verdict},"rows":[{}]}}"#,
                    rows.join(",")
                ),
            ]
        };
        let mut lines = vec![r#"{"type":"run.started","run":{"id":"r"}}"#.to_string()];
        lines.extend(floor(1, &["NOT-MET", "NOT-MET", "MET"]));
        lines.extend(floor(2, &["MET", "NOT-MET", "NOT-MET"]));
        lines.extend(floor(3, &["MET", "MET", "MET"]));
        let s = state(&lines);
        let c = convergence(&s);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].line(), "GATE 0: 2 → 2 → 0 MET");
        assert_eq!(c[0].rounds[1].fixed, ["criterion 1"]);
        assert_eq!(c[0].rounds[1].new, ["criterion 3"]);
        assert_eq!(c[0].rounds[2].fixed, ["criterion 2", "criterion 3"]);
        assert_eq!(c[0].rounds[0].spend(), "no agent");
        assert_eq!(
            c[0].summary(),
            "GATE 0: 2 → 2 → 0 MET · fixed 1 → 2 · new 1 → 0 · spend no agent → no agent → no agent"
        );
        assert_eq!(
            c[0].round_lines()[1],
            "round 2 (iter 2): 2 failing · fixed criterion 1 · new criterion 3 · no agent"
        );
    }
}
