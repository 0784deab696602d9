//! What changed between two iterations: verdicts that flipped, criteria
//! that changed state, findings added, dropped, downgraded or confirmed.
//! Pure: the `d` overlay draws its result.

use crate::model::{GateName, Iteration};

/// One change, and whether it is good news.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// What changed, in words.
    pub text: String,
    /// True for an improvement, false for a regression, `None` when neutral.
    pub better: Option<bool>,
}

/// The changes from `before` to `after`.
pub fn changes(before: &Iteration, after: &Iteration) -> Vec<Change> {
    let mut out = Vec::new();
    for g in GateName::ALL {
        let a = before.last_gate(g).map(|r| r.verdict.clone());
        let b = after.last_gate(g).map(|r| r.verdict.clone());
        if a != b {
            let show = |v: &Option<crate::model::Verdict>| {
                v.as_ref()
                    .map_or_else(|| "-".to_string(), ToString::to_string)
            };
            // GATE 0's ABANDONED lets the loop go on: it is not a regression.
            let better = b.as_ref().map(|v| {
                v.kind.is_pass()
                    || (g == GateName::Floor && v.kind == crate::model::VerdictKind::Abandoned)
            });
            out.push(Change {
                text: format!("GATE {} {g}: {} → {}", g.number(), show(&a), show(&b)),
                better,
            });
        }
    }
    let floor = |it: &Iteration| -> Vec<(String, &'static str)> {
        it.last_gate(GateName::Floor)
            .map(|r| {
                r.floor_rows()
                    .map(|f| (f.id.clone(), f.state.as_str()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let conf = |it: &Iteration| -> Vec<(String, &'static str)> {
        it.last_gate(GateName::Conformity)
            .map(|r| {
                r.criterion_rows()
                    .map(|c| (c.id.clone(), c.status.as_str()))
                    .collect()
            })
            .unwrap_or_default()
    };
    for (label, old, new) in [
        ("GATE 0", floor(before), floor(after)),
        ("GATE 1", conf(before), conf(after)),
    ] {
        for (id, state) in &new {
            let prev = old.iter().find(|(i, _)| i == id).map(|(_, s)| *s);
            if prev != Some(*state) {
                let better = Some(*state == "MET" || *state == "MET-RECORDED");
                out.push(Change {
                    text: format!("criterion {id} {label}: {} → {state}", prev.unwrap_or("-")),
                    better,
                });
            }
        }
    }
    for f in &after.findings {
        match before.findings.iter().find(|x| x.id == f.id) {
            None => out.push(Change {
                text: format!("finding {} new: {}", f.id, f.verdict.as_str()),
                better: None,
            }),
            Some(p) if p.verdict != f.verdict => out.push(Change {
                text: format!(
                    "finding {}: {} → {}",
                    f.id,
                    p.verdict.as_str(),
                    f.verdict.as_str()
                ),
                better: None,
            }),
            Some(_) => {}
        }
    }
    for f in &before.findings {
        if !after.findings.iter().any(|x| x.id == f.id) {
            out.push(Change {
                text: format!("finding {} gone", f.id),
                better: Some(true),
            });
        }
    }
    for v in &after.verifications {
        let prev = before
            .verifications
            .iter()
            .find(|x| x.finding == v.finding)
            .map(|x| x.result);
        if prev != Some(v.result) {
            out.push(Change {
                text: format!(
                    "finding {} verify-by-test: {}",
                    v.finding,
                    v.result.as_str()
                ),
                better: None,
            });
        }
    }
    out
}
